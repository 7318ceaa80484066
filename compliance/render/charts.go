package render

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
)

// The charts of the HTML report are inline SVG whose geometry is computed here and whose
// markup is the template's: every label goes through html/template's escaping, and the
// page needs no script or library to draw them.

// barChart is a horizontal bar chart: one row per bar, a label on the left, the value on
// the right of the bar.
type barChart struct {
	ID, Title string
	// Width and Height are the SVG's, in px; LabelW is the label column's.
	Width, Height, LabelW, LabelX int
	Rows                          []barRow
	// Track draws each row's full scale behind its bar (for percentages).
	Track  bool
	TrackW int
	// Empty, when set, is said instead of drawing the rows.
	Empty string
}

type barRow struct {
	Label, Tip, Value, Class string
	Y, TextY, BarW, ValueX   int
}

const (
	barChartWidth = 560
	barRowHeight  = 26
	barThickness  = 16
)

// newBarChart lays out rows whose values are scaled against full: a value of full fills
// the bar area.
func newBarChart(id, title string, labelW int, rows []barRow, values []float64, full float64) barChart {
	ch := barChart{ID: id, Title: title, Width: barChartWidth, LabelW: labelW, LabelX: labelW - 8, Rows: rows, TrackW: barChartWidth - labelW - 150}
	ch.Height = len(rows)*barRowHeight + 8
	for i := range ch.Rows {
		r := &ch.Rows[i]
		r.Y = 4 + i*barRowHeight
		r.TextY = r.Y + barThickness - 3
		if full > 0 {
			r.BarW = int(math.Round(values[i] / full * float64(ch.TrackW)))
		}
		if values[i] > 0 && r.BarW < 2 {
			r.BarW = 2 // something is there: let it show
		}
		r.ValueX = labelW + r.BarW + 6
	}
	return ch
}

// severityChart counts the open findings — each once, however many controls they fail
// — by severity, most severe first. Unknown findings are not open: the caption counts
// them apart.
func severityChart(open []findings.Finding) barChart {
	counts := map[findings.Severity]int{}
	top := 0
	for _, f := range open {
		if f.Status != findings.StatusUnknown {
			counts[f.Severity]++
			top = max(top, counts[f.Severity])
		}
	}
	var rows []barRow
	var values []float64
	for _, s := range findings.Severities {
		rows = append(rows, barRow{Label: s.String(), Tip: fmt.Sprintf("%d open %s findings", counts[s], s), Value: strconv.Itoa(counts[s]), Class: "sev-" + s.String()})
		values = append(values, float64(counts[s]))
	}
	ch := newBarChart("chart-severity", "Open findings by severity", 90, rows, values, float64(top))
	if top == 0 {
		ch.Empty = "No open finding."
	}
	return ch
}

// familyChart is the score of each top-level family: the share of passes among the
// controls warden decided, with what it could not decide beside it.
func familyChart(fams []compliance.FamilyResult) barChart {
	var rows []barRow
	var values []float64
	for _, f := range fams {
		if f.Parent != "" {
			continue
		}
		s := f.Score
		row := barRow{Label: shorten(f.ID+" "+f.Title, 30), Tip: f.ID + " " + f.Title, Class: "score"}
		undecided := fmt.Sprintf("%d not covered, %d manual", s.NotCovered, s.Manual)
		if s.Unknown > 0 {
			undecided = fmt.Sprintf("%d unknown, ", s.Unknown) + undecided
		}
		v := 0.0
		if s.Percent != nil {
			v = *s.Percent
			row.Value = fmt.Sprintf("%s (%d/%d)", percent(s.Percent), s.Pass, s.Pass+s.Fail)
			if s.Fail > 0 {
				row.Class = "score-fail"
			}
		} else {
			row.Value = "no verdict"
		}
		row.Tip += ": " + row.Value + "; " + undecided
		rows = append(rows, row)
		values = append(values, v)
	}
	ch := newBarChart("chart-families", "Score by control family", 230, rows, values, 100)
	ch.Track = true
	return ch
}

// lineChart is the trend of the framework's score over the history.
type lineChart struct {
	ID, Title     string
	Width, Height int
	// Plot area.
	Left, Right, Top, Bottom int
	// GridX is where the grid's labels end, AxisY the baseline of the time axis' labels.
	GridX, AxisY int
	Grid         []gridLine
	Points       string
	Dots         []dot
	XLabels      []axisLabel
	Empty        string
}

type gridLine struct {
	Y, TextY int
	Label    string
}

type dot struct {
	X, Y int
	Tip  string
}

type axisLabel struct {
	X      int
	Anchor string
	Text   string
}

func trendChart(trend []compliance.TrendPoint) lineChart {
	ch := lineChart{ID: "chart-trend", Title: "Score over the scan history", Width: barChartWidth, Height: 190, Left: 44, Right: barChartWidth - 16, Top: 12, Bottom: 160, GridX: 38, AxisY: 178}
	for _, p := range []int{0, 50, 100} {
		y := ch.y(float64(p))
		ch.Grid = append(ch.Grid, gridLine{Y: y, TextY: y + 4, Label: strconv.Itoa(p) + "%"})
	}
	var pts []compliance.TrendPoint
	for _, p := range trend {
		if p.Score.Percent != nil {
			pts = append(pts, p)
		}
	}
	if len(pts) == 0 {
		ch.Empty = "No scan of the history had a control warden could decide."
		return ch
	}
	first, last := pts[0].At, pts[len(pts)-1].At
	span := last.Sub(first)
	var b strings.Builder
	for i, p := range pts {
		// By time when the history spans some, so that a gap between scans shows.
		frac := 0.5
		switch {
		case span > 0:
			frac = float64(p.At.Sub(first)) / float64(span)
		case len(pts) > 1:
			frac = float64(i) / float64(len(pts)-1)
		}
		x := ch.Left + int(math.Round(frac*float64(ch.Right-ch.Left)))
		y := ch.y(*p.Score.Percent)
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d,%d", x, y)
		open := 0
		for _, n := range p.Open {
			open += n
		}
		ch.Dots = append(ch.Dots, dot{X: x, Y: y, Tip: fmt.Sprintf("scan %d, %s: %s (%d pass, %d fail), %d open findings",
			p.ScanID, p.At.UTC().Format("2006-01-02 15:04"), percent(p.Score.Percent), p.Score.Pass, p.Score.Fail, open)})
	}
	ch.Points = b.String()
	ch.XLabels = []axisLabel{{X: ch.Left, Anchor: "start", Text: first.UTC().Format("2006-01-02")}}
	if len(pts) > 1 {
		ch.XLabels = append(ch.XLabels, axisLabel{X: ch.Right, Anchor: "end", Text: last.UTC().Format("2006-01-02")})
	}
	return ch
}

func (ch lineChart) y(pct float64) int {
	return ch.Bottom - int(math.Round(pct/100*float64(ch.Bottom-ch.Top)))
}

// convergenceChart compares how long findings stay open: the median and 90th percentile
// of the resolved ones, and the age of the oldest open one.
func convergenceChart(c compliance.Convergence) barChart {
	durs := []time.Duration{c.MedianOpen, c.P90Open, c.OldestOpen}
	labels := []string{"median (resolved)", "90th percentile", "oldest open"}
	var rows []barRow
	var values []float64
	var top time.Duration
	for i, d := range durs {
		rows = append(rows, barRow{Label: labels[i], Tip: labels[i] + ": " + duration(d), Value: duration(d), Class: "conv"})
		values = append(values, float64(d))
		top = max(top, d)
	}
	rows[2].Class = "conv-open"
	ch := newBarChart("chart-converge", "Time to converge", 140, rows, values, float64(top))
	if top == 0 {
		ch.Empty = "No finding of the framework's policies was resolved or is open."
	}
	return ch
}

// duration says how long, to the precision a person reads it at.
func duration(d time.Duration) string {
	switch {
	case d <= 0:
		return "—"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
}

func percent(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return strconv.FormatFloat(math.Round(*p), 'f', 0, 64) + "%"
}

// shorten cuts s to n runes, with an ellipsis.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
