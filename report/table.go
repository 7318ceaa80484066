package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/scan"
)

// Table writes findings for a person at a terminal: grouped by severity and policy,
// coloured when Color is set (on a TTY), plain when piped.
type Table struct {
	Color bool
}

const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
)

var severityColor = map[findings.Severity]string{
	findings.Critical: "\x1b[1;35m", findings.High: "\x1b[1;31m", findings.Medium: "\x1b[33m",
	findings.Low: "\x1b[36m", findings.Info: "\x1b[2m",
}

func (t *Table) paint(code, s string) string {
	if !t.Color || code == "" {
		return s
	}
	return code + s + ansiReset
}

// Write implements Writer.
func (t *Table) Write(out io.Writer, r *scan.Result) error {
	w := bufio.NewWriter(out)
	open := r.Open()
	var prevSev findings.Severity = -1
	prevPolicy := ""
	for i, f := range open {
		if f.Severity != prevSev {
			n := 0
			for _, g := range open[i:] {
				if g.Severity == f.Severity {
					n++
				}
			}
			if prevSev != -1 {
				fmt.Fprintln(w)
			}
			fmt.Fprintln(w, t.paint(severityColor[f.Severity], fmt.Sprintf("%s (%d)", strings.ToUpper(f.Severity.String()), n)))
			prevSev, prevPolicy = f.Severity, ""
		}
		if f.Policy != prevPolicy {
			fmt.Fprintf(w, "  %s  %s\n", t.paint(ansiBold, termesc.Escape(f.Policy)), termesc.Escape(f.Title))
			prevPolicy = f.Policy
		}
		fmt.Fprintf(w, "    %s\n      %s\n", termesc.Escape(f.Resource), t.paint(ansiDim, termesc.Escape(f.Message)))
	}
	if len(open) > 0 {
		fmt.Fprintln(w)
	}
	if r.Summary.Waived > 0 {
		fmt.Fprintf(w, "Waived (%d):\n", r.Summary.Waived)
		for _, f := range r.Findings {
			if f.Status == findings.StatusWaived && f.Waiver != nil {
				fmt.Fprintf(w, "  %s on %s until %s (%s: %s)\n", termesc.Escape(f.Policy), termesc.Escape(f.Resource), f.Waiver.Expires.Format("2006-01-02"), termesc.Escape(f.Waiver.Owner), termesc.Escape(f.Waiver.Reason))
			}
		}
	}
	if len(r.ExpiredWaivers) > 0 {
		fmt.Fprintln(w, t.paint(severityColor[findings.Medium], fmt.Sprintf("Expired waivers (%d): they no longer suppress anything", len(r.ExpiredWaivers))))
		for _, x := range r.ExpiredWaivers {
			fmt.Fprintf(w, "  %s:%d %s on %s expired %s (owner %s): %d finding(s) open again\n", termesc.Escape(x.File), x.Line, termesc.Escape(x.Policy), termesc.Escape(x.Resource), x.Expired.Format("2006-01-02"), termesc.Escape(x.Owner), x.Findings)
		}
	}
	if r.Summary.Unknown > 0 {
		fmt.Fprintf(w, "Unknown (%d): findings of earlier scans in scopes this scan could not read, or whose policies failed on them\n", r.Summary.Unknown)
	}
	if len(r.IncompleteScopes) > 0 {
		fmt.Fprintln(w, t.paint(severityColor[findings.High], fmt.Sprintf("Incomplete scopes (%d): their resources are unknown, not clean", len(r.IncompleteScopes))))
		for _, s := range r.IncompleteScopes {
			msg := s.Error
			if msg == "" {
				msg = "no detail"
			}
			fmt.Fprintf(w, "  %s %s: %s\n", termesc.Escape(s.ID), termesc.Escape(s.Status), termesc.Escape(msg))
		}
	}
	if len(r.EvalErrors) > 0 {
		fmt.Fprintln(w, t.paint(severityColor[findings.High], fmt.Sprintf("INCOMPLETE: %s failed: their results are missing, not clean", plural(len(r.EvalErrors), "policy evaluation"))))
		for i, e := range r.EvalErrors {
			if i == 10 {
				fmt.Fprintf(w, "  … and %d more (see --format json)\n", len(r.EvalErrors)-10)
				break
			}
			policy := e.Policy
			if policy == "" {
				policy = "every policy"
			}
			fmt.Fprintf(w, "  %s on %s: %s\n", termesc.Escape(policy), termesc.Escape(e.Resource), termesc.Escape(e.Error))
		}
	}
	s := r.Summary
	var sev []string
	for _, x := range findings.Severities {
		sev = append(sev, fmt.Sprintf("%d %s", s.BySeverity[x.String()], x))
	}
	fmt.Fprintf(w, "%s on %d resources (%s) · %d policies",
		t.paint(ansiBold, plural(s.Findings, "finding")), s.Resources, strings.Join(sev, ", "), s.Policies)
	if s.Waived > 0 {
		fmt.Fprintf(w, " · %d waived", s.Waived)
	}
	if s.Incomplete {
		// Said again on the last line, where a reader of "0 findings" looks.
		fmt.Fprintf(w, " · %s", t.paint(severityColor[findings.High], "INCOMPLETE: "+plural(s.EvalErrors, "policy evaluation")+" failed"))
	}
	fmt.Fprintf(w, "\nsnapshot %s collected %s\n", termesc.Escape(r.Scan.Snapshot), r.Scan.CollectedAt.UTC().Format("2006-01-02T15:04:05Z"))
	return w.Flush()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
