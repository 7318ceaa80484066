// Package show words plans, apply results, recorded actions and approval requests for a
// person at a terminal: the tables `warden plan`, `apply`, `actions list` and
// `approvals list` print, what `warden approve` and `deny` answer, and the lines the demo
// asks approvals with.
package show

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/remediate"
)

// PlanJSON writes the plan as indented JSON: the plan file `warden apply` reads.
func PlanJSON(w io.Writer, p *remediate.Plan) error { return indented(w, p) }

// ApplyJSON writes an apply run's result as indented JSON (`warden apply --format json`).
func ApplyJSON(w io.Writer, res *remediate.Result) error { return indented(w, res) }

func indented(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// Plan writes the plan's actions, each with its target, change, reason, approvals and
// undo, then the notices; approvers are the gates' approvers.
func Plan(w io.Writer, p *remediate.Plan, approvers []string) {
	fmt.Fprintf(w, "plan %s: %s, %s\n", p.Hash[:12], Count(len(p.Actions), "action"), Count(len(p.Notices), "notice"))
	for _, a := range p.Actions {
		fmt.Fprintf(w, "\n%s  %s  risk %s\n", a.ID, a.Remediator, a.Risk)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  target\t%s\n", a.Target)
		if lines := narrowing(a.Before); lines != nil {
			fmt.Fprintf(tw, "  change\t%s → %s\n", a.Part, remediate.After(a.Remediator))
			fmt.Fprint(tw, strings.Join(lines, ""))
		} else if lines := replacement(a.Before); lines != nil {
			fmt.Fprintf(tw, "  change\t%s → replaced by a policy of the services used (below)\n", termesc.Escape(a.Part))
			fmt.Fprint(tw, strings.Join(lines, ""))
		} else {
			fmt.Fprintf(tw, "  change\t%s: %s → %s\n", a.Part, Clip(string(a.Before), 100), remediate.After(a.Remediator))
		}
		fmt.Fprintf(tw, "  why\t%s: %s\n", a.Policy, a.Message)
		fmt.Fprintf(tw, "  approval\t%s\n", Approval(a.Approvals, approvers))
		undo := "yes"
		if !a.Rollback.Possible {
			undo = "no: " + a.Rollback.Reason
		}
		fmt.Fprintf(tw, "  undo\t%s\n", undo)
		tw.Flush()
	}
	if len(p.Notices) > 0 {
		fmt.Fprintln(w, "\nnotices (no action):")
		for _, n := range p.Notices {
			fmt.Fprintf(w, "  %s on %s: %s\n", n.Policy, n.Resource, n.Reason)
		}
	}
}

// Approval says what the gates ask of an action, naming who may approve it.
func Approval(ap remediate.Approvals, approvers []string) string {
	switch ap.Verdict {
	case "auto":
		return "none: applied automatically"
	case "refused":
		return "refused: " + ap.Reason
	}
	if len(approvers) == 0 {
		return fmt.Sprintf("%d needed, but no approvers are configured (gates.approvers): nobody can approve it yet", ap.Needed)
	}
	return fmt.Sprintf("%d of %s, never the requester", ap.Needed, strings.Join(approvers, ", "))
}

// Apply writes an apply run's result: one row per action, then what the run recovered
// and why it stopped or left actions for the next run.
func Apply(w io.Writer, res *remediate.Result) {
	if res.DryRun {
		fmt.Fprintln(w, "dry run: nothing is changed (add --confirm to apply)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tREMEDIATOR\tPART\tRISK\tSTATE\tOUTCOME")
	for _, it := range res.Items {
		outcome := it.Outcome
		if it.Request != "" {
			outcome += " — warden approve " + it.Request
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", it.Action, it.Remediator, Clip(it.Part, 60), it.Risk, it.State, outcome)
	}
	tw.Flush()
	if res.Recovered > 0 {
		fmt.Fprintf(w, "resolved %s an interrupted run had left\n", Count(res.Recovered, "action"))
	}
	if res.Stopped != "" {
		fmt.Fprintf(w, "stopped: %s\n", res.Stopped)
	}
	if res.Deferred != "" {
		fmt.Fprintf(w, "deferred: %s; the next run takes them up\n", res.Deferred)
	}
}

// Clip cuts s to n bytes, the last an ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// Count is "1 action", "2 actions".
func Count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// narrowing is, for a fix that narrows a grant from usage (aws.iam.rightsize_*), a line
// per permission it removes, and the document before and after: what an approver needs to judge
// it, beside the finding's evidence (the "why" line: each removal's last use and the
// data's date, which the before-state leaves out so that a new read of the same usage
// does not void the approval). Other fixes' before-states give nil.
func narrowing(before json.RawMessage) []string {
	var b struct {
		Removed    []string        `json:"removed"`
		Document   json.RawMessage `json:"document"`
		After      json.RawMessage `json:"after"`
		WindowDays int             `json:"window_days"`
	}
	if json.Unmarshal(before, &b) != nil || len(b.Removed) == 0 {
		return nil
	}
	var out []string
	if len(b.Document) > 0 && string(b.Document) != "null" {
		out = append(out, fmt.Sprintf("  was\t%s\n", termesc.Escape(Clip(string(b.Document), 200))))
	}
	for _, r := range b.Removed {
		out = append(out, fmt.Sprintf("  removes\t%s: unused for %d days\n", termesc.Escape(r), b.WindowDays))
	}
	after := "nothing: the inline policy is deleted"
	if len(b.After) > 0 && string(b.After) != "null" {
		after = Clip(string(b.After), 200)
	}
	return append(out, fmt.Sprintf("  leaves\t%s\n", termesc.Escape(after)))
}

// replacement is, for a fix that puts a policy of the services used in the place of an
// AWS-managed policy (aws.iam.replace_managed_attachment), the policy it detaches and
// the one it creates and attaches instead, with what that grants. Other fixes'
// before-states give nil.
func replacement(before json.RawMessage) []string {
	var b struct {
		PolicyARN     string          `json:"policy_arn"`
		GeneratedName string          `json:"generated_name"`
		GeneratedPath string          `json:"generated_path"`
		Document      json.RawMessage `json:"document"`
		UsedServices  []string        `json:"used_services"`
		WindowDays    int             `json:"window_days"`
	}
	if json.Unmarshal(before, &b) != nil || b.PolicyARN == "" || b.GeneratedName == "" {
		return nil
	}
	out := []string{fmt.Sprintf("  detaches\t%s\n", termesc.Escape(b.PolicyARN))}
	if len(b.UsedServices) == 0 || len(b.Document) == 0 || string(b.Document) == "null" {
		return append(out, fmt.Sprintf("  attaches\tnothing: none of its services was used within %d days\n", b.WindowDays))
	}
	return append(out, fmt.Sprintf("  attaches\t%s (created), granting every action of %s: the services used within %d days\n",
		termesc.Escape(b.GeneratedPath+b.GeneratedName), termesc.Escape(strings.Join(b.UsedServices, ", ")), b.WindowDays))
}
