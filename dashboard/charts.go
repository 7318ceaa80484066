package dashboard

import (
	"fmt"
	"strconv"

	"github.com/warden-sec/warden/findings"
)

// chart is an inline SVG chart, drawn by the template from shapes computed here: no
// script, no style attribute (the CSP allows neither), colours from the stylesheet's
// classes.
type chart struct {
	W, H   int
	Label  string // the chart's accessible name
	Bars   []bar
	Texts  []text
	Legend []legendItem
	Empty  string // shown instead of the chart when there is nothing to draw
}

type bar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

type text struct {
	X, Y   float64
	Anchor string // start, middle, end
	Text   string
}

type legendItem struct {
	Class, Text string
}

// f formats a coordinate for an SVG attribute.
func f(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

const (
	chartW, chartH       = 720.0, 220.0
	padL, padR, padT, pB = 40.0, 10.0, 10.0, 30.0
)

// axis adds the value axis (0 and the maximum) to c.
func axis(c *chart, maxV int) {
	c.Texts = append(c.Texts,
		text{X: padL - 6, Y: chartH - pB, Anchor: "end", Text: "0"},
		text{X: padL - 6, Y: padT + 10, Anchor: "end", Text: strconv.Itoa(maxV)})
}

// historyChart stacks each scan's open findings by severity, oldest scan left.
func historyChart(points []historyPoint) chart {
	c := chart{W: int(chartW), H: int(chartH), Label: "Open findings by severity at each scan"}
	if len(points) == 0 {
		c.Empty = "No scan is recorded yet: warden scan records one."
		return c
	}
	maxV := 1
	for _, p := range points {
		maxV = max(maxV, p.Open)
	}
	slot := (chartW - padL - padR) / float64(len(points))
	w := min(max(2, slot*0.7), 48)
	scale := (chartH - padT - pB) / float64(maxV)
	for i, p := range points {
		x := padL + float64(i)*slot + (slot-w)/2
		y := chartH - pB
		for _, sev := range findings.Severities {
			n := p.BySeverity[sev.String()]
			if n == 0 {
				continue
			}
			h := float64(n) * scale
			y -= h
			c.Bars = append(c.Bars, bar{X: x, Y: y, W: w, H: h, Class: "sev-" + sev.String(),
				Title: fmt.Sprintf("scan %d (%s): %d %s", p.ScanID, p.At.UTC().Format("2006-01-02 15:04"), n, sev)})
		}
		if len(points) <= 12 || i == 0 || i == len(points)-1 {
			c.Texts = append(c.Texts, text{X: x + w/2, Y: chartH - pB + 16, Anchor: "middle", Text: "#" + strconv.FormatInt(p.ScanID, 10)})
		}
	}
	axis(&c, maxV)
	for _, sev := range findings.Severities {
		c.Legend = append(c.Legend, legendItem{Class: "sev-" + sev.String(), Text: sev.String()})
	}
	return c
}

// convergenceChart pairs, for each day, the findings the daemon opened and resolved.
func convergenceChart(days []day) chart {
	c := chart{W: int(chartW), H: int(chartH), Label: "Findings opened and resolved each day"}
	// Without the daemon, a day counts the findings first seen by the history's scans.
	maxV, seen := 1, false
	for _, d := range days {
		maxV = max(maxV, d.Opened, d.Resolved)
		seen = seen || d.Opened > 0 || d.Resolved > 0
	}
	if !seen {
		c.Empty = "No finding was opened or resolved in these days."
		return c
	}
	slot := (chartW - padL - padR) / float64(len(days))
	w := max(2, slot*0.35)
	scale := (chartH - padT - pB) / float64(maxV)
	for i, d := range days {
		x := padL + float64(i)*slot + slot*0.1
		label := d.Day.Format("Jan 2")
		for j, v := range []struct {
			n     int
			class string
			verb  string
		}{{d.Opened, "opened", "opened"}, {d.Resolved, "resolved", "resolved"}} {
			h := float64(v.n) * scale
			c.Bars = append(c.Bars, bar{X: x + float64(j)*w, Y: chartH - pB - h, W: w, H: h, Class: v.class,
				Title: fmt.Sprintf("%s: %d %s", label, v.n, v.verb)})
		}
		if i%2 == 0 || len(days) <= 7 {
			c.Texts = append(c.Texts, text{X: x + w, Y: chartH - pB + 16, Anchor: "middle", Text: label})
		}
	}
	axis(&c, maxV)
	c.Legend = []legendItem{{"opened", "opened"}, {"resolved", "resolved"}}
	return c
}

// severityChart draws the open findings by severity as horizontal bars.
func severityChart(counts []sevCount) chart {
	const w, h, labelW, row = 360.0, 150.0, 70.0, 28.0
	c := chart{W: int(w), H: int(h), Label: "Open findings by severity"}
	maxV := 1
	for _, s := range counts {
		maxV = max(maxV, s.Count)
	}
	for i, s := range counts {
		y := float64(i) * row
		bw := (w - labelW - 40) * float64(s.Count) / float64(maxV)
		c.Texts = append(c.Texts, text{X: labelW - 6, Y: y + 17, Anchor: "end", Text: s.Severity},
			text{X: labelW + bw + 6, Y: y + 17, Anchor: "start", Text: strconv.Itoa(s.Count)})
		c.Bars = append(c.Bars, bar{X: labelW, Y: y + 4, W: bw, H: row - 8, Class: "sev-" + s.Severity,
			Title: fmt.Sprintf("%d open %s", s.Count, s.Severity)})
	}
	return c
}
