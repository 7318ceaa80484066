// Package render writes compliance reports, one writer per format: a self-contained HTML
// page for people, CSV for spreadsheets, JSON of the whole document, SARIF 2.1.0 for
// code-scanning tools and OCSF 1.8.0 Compliance Findings (class 2003) for security lakes.
// Every format is written from a compliance.Document and nothing else, so that the five
// files of one report always tell the same story.
package render

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/suggest"
)

// Writer writes a compliance document in one format.
type Writer interface {
	Write(w io.Writer, d *compliance.Document) error
}

// formats are the names New accepts, in the order the help text lists them.
var formats = []string{"html", "csv", "json", "sarif", "ocsf"}

// Formats lists the format names New accepts.
func Formats() []string { return slices.Clone(formats) }

// New returns the writer for a format (case-insensitive); an unknown format is an error
// that names the known ones.
func New(format string) (Writer, error) {
	switch strings.ToLower(format) {
	case "html":
		return HTML{}, nil
	case "csv":
		return CSV{}, nil
	case "json":
		return JSON{}, nil
	case "sarif":
		return SARIF{}, nil
	case "ocsf":
		return OCSF{}, nil
	}
	msg := fmt.Sprintf("unknown report format %q", format)
	if s := suggest.Closest(strings.ToLower(format), formats); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return nil, fmt.Errorf("%s; known: %s", msg, strings.Join(formats, ", "))
}

// errNoReport is what every writer says about a document without its evaluation: there is
// nothing to write, and an empty file would read as a framework without controls.
var errNoReport = errors.New("the document has no report (compliance.Evaluate's result is missing)")

func check(d *compliance.Document) error {
	if d == nil || d.Report == nil {
		return errNoReport
	}
	return nil
}

// Evidence kinds: how a finding counts towards a control.
const (
	evidenceFailing = "failing"
	evidenceUnknown = "unknown"
	evidenceWaived  = "waived"
)

// evidence is one finding of a control, and how it counts.
type evidence struct {
	Kind    string
	Finding findings.Finding
}

// evidenceOf lists a control's findings: failing first, then unknown, then waived, each
// in report order.
func evidenceOf(c *compliance.ControlResult) []evidence {
	out := make([]evidence, 0, len(c.Failing)+len(c.Unknown)+len(c.Waived))
	for _, f := range c.Failing {
		out = append(out, evidence{evidenceFailing, f})
	}
	for _, f := range c.Unknown {
		out = append(out, evidence{evidenceUnknown, f})
	}
	for _, f := range c.Waived {
		out = append(out, evidence{evidenceWaived, f})
	}
	return out
}

// controlsByFinding maps the fingerprint of every failing or unknown finding to the ids
// of the controls it counts against, in the framework's order.
func controlsByFinding(rep *compliance.Report) map[string][]string {
	out := map[string][]string{}
	for _, c := range rep.Controls {
		for _, list := range [][]findings.Finding{c.Failing, c.Unknown} {
			for _, f := range list {
				if ids := out[f.Fingerprint]; len(ids) == 0 || ids[len(ids)-1] != c.ID {
					out[f.Fingerprint] = append(ids, c.ID)
				}
			}
		}
	}
	return out
}

// maxSeverity is the highest severity among fs, and false when fs is empty.
func maxSeverity(fs []findings.Finding) (findings.Severity, bool) {
	if len(fs) == 0 {
		return findings.Info, false
	}
	m := fs[0].Severity
	for _, f := range fs[1:] {
		m = max(m, f.Severity)
	}
	return m, true
}

// statusLabel is how people read a control's status.
func statusLabel(s compliance.Status) string {
	switch s {
	case compliance.StatusPass:
		return "Pass"
	case compliance.StatusFail:
		return "Fail"
	case compliance.StatusUnknown:
		return "Unknown"
	case compliance.StatusNotCovered:
		return "Not covered"
	case compliance.StatusManual:
		return "Manual"
	}
	return string(s)
}

// failedScopes are the scopes that were not read in full: their resources are unknown,
// not clean.
func failedScopes(d *compliance.Document) []compliance.Scope {
	var out []compliance.Scope
	for _, s := range d.Scopes {
		if s.Status != "ok" {
			out = append(out, s)
		}
	}
	return out
}
