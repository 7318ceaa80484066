package render

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
)

// HTML writes the report as one self-contained page that opens offline: CSS inline,
// charts as inline SVG, no font, image, script or style from anywhere else. It shows
// first what warden could not see (the scopes that failed), then the score and the
// charts, every control with its status and its evidence (in <details>), the waived
// findings with owner, reason and expiry, the fixes with their audit entries, and the
// audit checkpoint with how to verify it. Every string is escaped by html/template.
type HTML struct{}

//go:embed report.html.tmpl
var htmlTemplate string

// page parses the template. Write parses it each time rather than keeping it in a
// package variable: that costs little next to rendering a framework of a thousand
// controls.
func page() (*template.Template, error) {
	return template.New("report").Parse(htmlTemplate)
}

type htmlView struct {
	Title, At, Generated, CollectedAt string
	Framework                         compliance.Info
	Tool                              string
	Source                            compliance.Source
	Score                             compliance.Score
	Percent                           string
	Decided                           int
	Blind                             []compliance.Scope
	Unknown, Affected                 int
	Scopes                            []compliance.Scope
	Open, Carried                     int
	Severity, Families, Converge      barChart
	Trend                             lineChart
	Convergence                       compliance.Convergence
	MedianOpen, P90Open, OldestOpen   string
	Controls                          []htmlControl
	Waived, Expired                   []htmlFinding
	Fixes                             []htmlFix
	Checkpoint                        *htmlCheckpoint
}

type htmlControl struct {
	compliance.ControlResult
	Anchor, StatusLabel, FamilyTitle, Evidence string
	Findings                                   []htmlFinding
	Fixes                                      int
}

type htmlFinding struct {
	Kind, Policy, Severity, Resource, Account, Region, Message, Fingerprint string
	Controls                                                                []string
	Owner, Reason, Expires                                                  string
	Expired                                                                 bool
}

type htmlFix struct {
	compliance.Fix
	When, Seqs string
}

type htmlCheckpoint struct {
	Size       int64
	Root, Note string
	At         string
}

const stamp = "2006-01-02 15:04 MST"

// Write implements Writer.
func (HTML) Write(w io.Writer, d *compliance.Document) error {
	if err := check(d); err != nil {
		return fmt.Errorf("write compliance HTML: %w", err)
	}
	t, err := page()
	if err != nil {
		return fmt.Errorf("parse the HTML report template: %w", err)
	}
	if err := t.Execute(w, view(d)); err != nil {
		return fmt.Errorf("write compliance HTML of %s: %w", d.Report.Framework.ID, err)
	}
	return nil
}

func view(d *compliance.Document) *htmlView {
	rep := d.Report
	fw := rep.Framework
	v := &htmlView{
		Title:       strings.TrimSpace(fw.Name+" "+fw.Version) + " — compliance report",
		At:          rep.At.UTC().Format(stamp),
		Generated:   d.Generated.UTC().Format(stamp),
		CollectedAt: d.Source.CollectedAt.UTC().Format(stamp),
		Framework:   fw,
		Tool:        d.Tool,
		Source:      d.Source,
		Score:       rep.Score,
		Percent:     percent(rep.Score.Percent),
		Decided:     rep.Score.Pass + rep.Score.Fail,
		Blind:       failedScopes(d),
		Unknown:     rep.Score.Unknown,
		Scopes:      d.Scopes,
		Families:    familyChart(rep.Families),
		Trend:       trendChart(d.Trend),
		Convergence: d.Convergence,
		Converge:    convergenceChart(d.Convergence),
		MedianOpen:  duration(d.Convergence.MedianOpen),
		P90Open:     duration(d.Convergence.P90Open),
		OldestOpen:  duration(d.Convergence.OldestOpen),
	}
	open := d.OpenFindings()
	v.Severity = severityChart(open)
	for _, f := range open {
		if f.Status == findings.StatusUnknown {
			v.Carried++
		} else {
			v.Open++
		}
	}
	titles := map[string]string{}
	for _, f := range rep.Families {
		titles[f.ID] = f.Title
	}
	fixes := map[string]int{}
	for _, f := range d.Fixes {
		for _, c := range f.Controls {
			fixes[c]++
		}
	}
	waivedAt, expiredAt := map[string]int{}, map[string]int{} // fingerprint → index in the list
	for _, c := range rep.Controls {
		hc := htmlControl{ControlResult: c, Anchor: "control-" + c.ID, StatusLabel: statusLabel(c.Status), FamilyTitle: titles[c.Family], Fixes: fixes[c.ID]}
		var parts []string
		for _, n := range []struct {
			n    int
			word string
		}{{len(c.Failing), "failing"}, {len(c.Unknown), "unknown"}, {len(c.Waived), "waived"}} {
			if n.n > 0 {
				parts = append(parts, strconv.Itoa(n.n)+" "+n.word)
			}
		}
		hc.Evidence = strings.Join(parts, ", ")
		if slices.ContainsFunc(c.Runs, func(r compliance.PolicyResult) bool { return len(r.FailedScopes) > 0 }) || len(c.Unknown) > 0 {
			v.Affected++
		}
		for _, e := range evidenceOf(&c) {
			hf := finding(e, rep.At)
			hc.Findings = append(hc.Findings, hf)
			// The waived findings, and the failing ones whose waiver had expired, are
			// listed once each, with every control they concern.
			switch {
			case e.Kind == evidenceWaived:
				once(&v.Waived, waivedAt, hf, c.ID)
			case e.Kind == evidenceFailing && e.Finding.Waiver != nil:
				once(&v.Expired, expiredAt, hf, c.ID)
			}
		}
		v.Controls = append(v.Controls, hc)
	}
	for _, f := range d.Fixes {
		seqs := make([]string, len(f.AuditSeqs))
		for i, s := range f.AuditSeqs {
			seqs[i] = "#" + strconv.FormatInt(s, 10)
		}
		v.Fixes = append(v.Fixes, htmlFix{Fix: f, When: f.At.UTC().Format(stamp), Seqs: strings.Join(seqs, " ")})
	}
	if cp := d.Checkpoint; cp != nil {
		v.Checkpoint = &htmlCheckpoint{Size: cp.Size, Root: cp.Root, Note: cp.Note, At: cp.At.UTC().Format(stamp)}
	}
	return v
}

func finding(e evidence, at time.Time) htmlFinding {
	f := e.Finding
	hf := htmlFinding{Kind: e.Kind, Policy: f.Policy, Severity: f.Severity.String(), Resource: f.Resource,
		Account: f.Account, Region: f.Region, Message: f.Message, Fingerprint: f.Fingerprint}
	if w := f.Waiver; w != nil {
		hf.Owner, hf.Reason, hf.Expires = w.Owner, w.Reason, w.Expires.UTC().Format("2006-01-02")
		hf.Expired = !at.Before(w.Expires)
	}
	return hf
}

// once adds hf to list, or the control to the entry of list with hf's fingerprint.
func once(list *[]htmlFinding, index map[string]int, hf htmlFinding, control string) {
	if i, ok := index[hf.Fingerprint]; ok {
		if !slices.Contains((*list)[i].Controls, control) {
			(*list)[i].Controls = append((*list)[i].Controls, control)
		}
		return
	}
	hf.Controls = []string{control}
	index[hf.Fingerprint] = len(*list)
	*list = append(*list, hf)
}
