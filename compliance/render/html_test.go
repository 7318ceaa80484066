package render_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
)

// parsedPage is a parsed HTML report.
type parsedPage struct {
	root *html.Node
	byID map[string]*html.Node
}

func parsePage(t *testing.T, b []byte) *parsedPage {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	p := &parsedPage{root: root, byID: map[string]*html.Node{}}
	for n := range root.Descendants() {
		if id := attr(n, "id"); id != "" {
			p.byID[id] = n
		}
	}
	return p
}

func attr(n *html.Node, name string) string {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val
		}
	}
	return ""
}

func text(n *html.Node) string {
	var b strings.Builder
	for d := range n.Descendants() {
		if d.Type == html.TextNode {
			b.WriteString(d.Data)
		}
	}
	return b.String()
}

func elements(root *html.Node, tag string) []*html.Node {
	var out []*html.Node
	for n := range root.Descendants() {
		if n.Type == html.ElementNode && n.Data == tag {
			out = append(out, n)
		}
	}
	return out
}

// urlAttrs are the attributes through which a page loads or links to something.
var urlAttrs = map[string]bool{"src": true, "href": true, "xlink:href": true, "action": true, "formaction": true,
	"poster": true, "srcset": true, "data": true, "background": true, "cite": true, "longdesc": true, "manifest": true, "ping": true}

// selfContained reports what in the page would reach outside it: a URL attribute that is
// not a fragment of the page itself, a url() or @import in CSS, an element that embeds
// or loads something.
func selfContained(p *parsedPage) []string {
	var bad []string
	for n := range p.root.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.Data {
		case "link", "img", "iframe", "object", "embed", "audio", "video", "source", "track", "image", "use", "base", "form":
			bad = append(bad, "<"+n.Data+">")
		case "meta":
			if attr(n, "http-equiv") != "" {
				bad = append(bad, "<meta http-equiv>") // a refresh would leave the page
			}
		case "script":
			if attr(n, "src") != "" {
				bad = append(bad, "<script src>")
			}
		case "style":
			if css := strings.ToLower(text(n)); strings.Contains(css, "url(") || strings.Contains(css, "@import") {
				bad = append(bad, "url() or @import in <style>")
			}
		}
		for _, a := range n.Attr {
			key := a.Key
			if a.Namespace != "" {
				key = a.Namespace + ":" + a.Key
			}
			if urlAttrs[key] && !strings.HasPrefix(a.Val, "#") {
				bad = append(bad, "<"+n.Data+" "+key+"="+a.Val+">")
			}
			if key == "style" && strings.Contains(strings.ToLower(a.Val), "url(") {
				bad = append(bad, "url() in a style attribute of <"+n.Data+">")
			}
		}
	}
	return bad
}

// TestHTML_selfContainedAndComplete: for every framework, the page references nothing
// outside itself, shows every control (an element per control id), draws its four
// charts as inline SVG, and shows the failed scopes, the waived findings, the fixes with
// their audit entries and the checkpoint note.
func TestHTML_selfContainedAndComplete(t *testing.T) {
	for _, id := range frameworkIDs {
		t.Run(id, func(t *testing.T) {
			d := acmeDocument(t, id)
			p := parsePage(t, write(t, "html", d))
			if bad := selfContained(p); len(bad) > 0 {
				t.Errorf("the page reaches outside itself: %v", bad)
			}
			rows := 0
			for _, c := range d.Report.Controls {
				n := p.byID["control-"+c.ID]
				if n == nil {
					t.Errorf("control %s has no row", c.ID)
					continue
				}
				rows++
				if got := text(n); !strings.Contains(got, c.ID) || !strings.Contains(got, c.Title) || !strings.Contains(got, c.Reason) {
					t.Errorf("row of %s = %q: want its id, title and reason", c.ID, got)
				}
				fs := append(append(append([]findings.Finding(nil), c.Failing...), c.Unknown...), c.Waived...)
				ev := p.byID["evidence-"+c.ID]
				if len(fs) > 0 && (ev == nil || len(elements(ev, "details")) != 1) {
					t.Errorf("control %s has evidence and no <details> of it", c.ID)
					continue
				}
				for _, f := range fs {
					if !strings.Contains(text(ev), f.Fingerprint) || !strings.Contains(text(ev), f.Resource) {
						t.Errorf("the evidence of %s does not show finding %s on %s", c.ID, f.Fingerprint, f.Resource)
					}
				}
			}
			if rows != len(d.Report.Controls) {
				t.Errorf("%d control rows, want %d", rows, len(d.Report.Controls))
			}
			for _, chart := range []string{"chart-severity", "chart-families", "chart-trend", "chart-converge"} {
				n := p.byID[chart]
				if n == nil || n.Data != "svg" {
					t.Errorf("no inline <svg id=%s>", chart)
					continue
				}
				if len(elements(n, "rect"))+len(elements(n, "polyline")) == 0 {
					t.Errorf("chart %s draws nothing", chart)
				}
			}
			blind := p.byID["blind"]
			for _, s := range d.Scopes {
				if s.Status != "ok" && (blind == nil || !strings.Contains(text(blind), s.ID) || !strings.Contains(text(blind), s.Error)) {
					t.Errorf("failed scope %s is not in the section of what warden could not see", s.ID)
				}
			}
			waived := text(p.byID["waived"])
			for _, c := range d.Report.Controls {
				for _, f := range append(c.Waived, c.Failing...) {
					if w := f.Waiver; w != nil && (!strings.Contains(waived, w.Owner) || !strings.Contains(waived, w.Reason) || !strings.Contains(waived, w.Expires.Format("2006-01-02"))) {
						t.Errorf("waiver of %s (%s, %s) is not listed with owner, reason and expiry", f.Fingerprint, w.Owner, w.Reason)
					}
				}
			}
			fixes := text(p.byID["fixes"])
			for _, f := range d.Fixes {
				if !strings.Contains(fixes, f.Action) || !strings.Contains(fixes, "#1201") {
					t.Errorf("fix %s is not listed with its audit entries", f.Action)
				}
			}
			if n := p.byID["checkpoint-note"]; n == nil || n.Data != "pre" || text(n) != d.Checkpoint.Note {
				t.Error("the checkpoint note is not in a <pre>, verbatim")
			}
			if cp := text(p.byID["checkpoint"]); !strings.Contains(cp, "warden audit verify --checkpoint") {
				t.Error("the checkpoint section does not say how to verify it")
			}
			if title := text(elements(p.root, "title")[0]); !strings.Contains(title, d.Report.Framework.Name) {
				t.Errorf("title %q does not name the framework", title)
			}
		})
	}
}

// TestHTML_escapesEverything: markup in any string of the document — titles, messages,
// errors, waivers, the checkpoint — is shown as text, never run or parsed as markup.
func TestHTML_escapesEverything(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	x := func(s string) string { return `"><img src=x onerror=alert(1)><script>alert("` + s + `")</script>` }
	pct := 50.0
	f := findings.Finding{Policy: x("policy"), Title: x("title"), Resource: "javascript:alert(1)", Account: x("account"),
		Message: x("message"), Fingerprint: "fp", Status: findings.StatusWaived,
		Waiver: &findings.WaiverRef{Owner: x("owner"), Reason: `</td></tr></table><style>body{background:url(https://evil.example/)}</style>`, Expires: at.AddDate(0, 1, 0)}}
	d := &compliance.Document{
		Report: &compliance.Report{
			Framework: compliance.Info{ID: "x", Name: x("framework"), Version: "</title><script>alert(3)</script>", Source: x("source")},
			At:        at,
			Score:     compliance.Score{Controls: 1, Pass: 1, Percent: &pct},
			Families:  []compliance.FamilyResult{{ID: x("family"), Title: x("family title"), Score: compliance.Score{Pass: 1, Percent: &pct}}},
			Controls: []compliance.ControlResult{{Control: compliance.Control{ID: `c1" onmouseover="alert(4)`, Title: x("control"), Family: x("family"),
				Note: x("note")}, Status: compliance.StatusPass, Reason: x("reason"), Waived: []findings.Finding{f}}},
		},
		Tool:       x("tool"),
		Source:     compliance.Source{Snapshot: x("snapshot")},
		Checkpoint: &compliance.Checkpoint{Root: x("root"), Note: "</pre><script>alert(5)</script>"},
		Scopes:     []compliance.Scope{{ID: x("scope"), Status: "failed", Error: x("error")}},
		Fixes:      []compliance.Fix{{Action: x("action"), Controls: []string{`c1" onmouseover="alert(4)`}, Target: x("target"), At: at}},
		Trend:      []compliance.TrendPoint{{At: at, Score: compliance.Score{Pass: 1, Percent: &pct}, Open: map[string]int{x("sev"): 1}}},
	}
	b := write(t, "html", d)
	p := parsePage(t, b)
	if imgs := elements(p.root, "img"); len(imgs) > 0 {
		t.Errorf("%d <img> elements: markup from the document was not escaped", len(imgs))
	}
	scripts := elements(p.root, "script")
	if len(scripts) != 1 || strings.Contains(text(scripts[0]), "alert") {
		t.Errorf("%d <script> elements (want the page's one, which opens <details> for printing)", len(scripts))
	}
	if styles := elements(p.root, "style"); len(styles) != 1 {
		t.Errorf("%d <style> elements, want the page's one", len(styles))
	}
	if bad := selfContained(p); len(bad) > 0 {
		t.Errorf("the page reaches outside itself: %v", bad)
	}
	for n := range p.root.Descendants() {
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s> has an event handler %s=%q", n.Data, a.Key, a.Val)
			}
		}
	}
	// The strings are there, as text.
	body := text(p.root)
	for _, s := range []string{x("message"), x("owner"), f.Waiver.Reason, x("error"), "</pre><script>alert(5)</script>", f.Resource} {
		if !strings.Contains(body, s) {
			t.Errorf("the page does not show %q as text", s)
		}
	}
	if n := p.byID["checkpoint-note"]; n == nil || text(n) != d.Checkpoint.Note {
		t.Error("the checkpoint note is not shown verbatim")
	}
}

// TestHTML_saysWhatIsMissing: a document with no checkpoint, no failed scope, no fix, no
// waiver and no history says so in each place, rather than showing empty tables or
// charts.
func TestHTML_saysWhatIsMissing(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	d := &compliance.Document{
		Report: &compliance.Report{
			Framework: compliance.Info{ID: "x", Name: "X"},
			At:        at,
			Families:  []compliance.FamilyResult{{ID: "1", Title: "One", Score: compliance.Score{Controls: 3, NotCovered: 1, Manual: 1, Unknown: 1}}},
			Controls: []compliance.ControlResult{
				{Control: compliance.Control{ID: "1.1", Title: "a", Family: "1"}, Status: compliance.StatusNotCovered, Reason: "no policy"},
				{Control: compliance.Control{ID: "1.2", Title: "b", Family: "1"}, Status: compliance.StatusManual, Reason: "a person decides"},
				{Control: compliance.Control{ID: "1.3", Title: "c", Family: "1", Policies: []string{"P"}}, Status: compliance.StatusUnknown,
					Reason: "P could not judge everything", Runs: []compliance.PolicyResult{{Policy: "P", Ran: true}}},
			},
		},
		Scopes: []compliance.Scope{{ID: "aws/1/iam", Status: "ok", Resources: 3}},
	}
	p := parsePage(t, write(t, "html", d))
	for section, want := range map[string]string{
		"blind":          "Every one of the 1 scopes the evidence covers was read in full",
		"checkpoint":     "No audit checkpoint was signed",
		"fixes":          "No remediation action ended",
		"waived":         "No finding of this framework's controls is waived",
		"chart-severity": "No open finding.",
		"chart-trend":    "No scan of the history had a control warden could decide.",
		"chart-converge": "No finding of the framework's policies was resolved or is open.",
		"chart-families": "no verdict",
	} {
		if n := p.byID[section]; n == nil || !strings.Contains(text(n), want) {
			t.Errorf("#%s does not say %q", section, want)
		}
	}
	if ev := p.byID["evidence-1.3"]; ev == nil || !strings.Contains(text(ev), "P") {
		t.Error("a control with policies and no finding has no evidence row with its runs")
	}
	if p.byID["evidence-1.1"] != nil {
		t.Error("a control with neither policy nor finding has an evidence row")
	}
	for id, badge := range map[string]string{"control-1.1": "Not covered", "control-1.2": "Manual", "control-1.3": "Unknown"} {
		if n := p.byID[id]; n == nil || !strings.Contains(text(n), badge) {
			t.Errorf("row %s lacks the badge %q", id, badge)
		}
	}
}
