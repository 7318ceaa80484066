package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/scan"
)

// screen is the demo's last word: what was found, fixed, and what waits for whom, where
// everything is, and what to try next.
func (d *run) screen() {
	w := d.o.Stdout
	fmt.Fprintf(w, "\n── acme after one reconciliation (%.1fs) ─────────────────────────────\n", time.Since(d.start).Seconds())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	found := severityText(d.first)
	if n := len(d.first.IncompleteScopes); n > 0 {
		found += fmt.Sprintf("; %s unread (unknown, not clean): %s", show.Count(n, "scope"), scopeNames(d.first))
	}
	fmt.Fprintf(tw, "found\t%s\n", found)
	fmt.Fprintf(tw, "fixed\t%s, each verified in the cloud: %s\n", fixes(len(d.applied)), byRemediator(slices.Collect(maps.Values(d.applied))))
	fmt.Fprintf(tw, "now\t%s open (%d fewer)\n", severityText(d.last), d.first.Summary.Findings-d.last.Summary.Findings)
	waits := d.waiting()
	if len(waits) == 0 {
		fmt.Fprintf(tw, "waiting\tnothing\n")
	}
	for i, line := range waits {
		label := ""
		if i == 0 {
			label = "waiting"
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, line)
	}
	if d.denied > 0 {
		fmt.Fprintf(tw, "denied\t%s: will not run\n", fixes(d.denied))
	}
	fmt.Fprintf(tw, "no fix\t%s: manual or notify-only policies, waived or unknown findings (%s)\n", show.Count(len(d.plan.Notices), "notice"), d.rel(d.path("plan.json")))
	tw.Flush()

	fmt.Fprintln(w, "\nwhere things are")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  report\t%s\t%s compliance: %d pass, %d fail, %d unknown\n", d.rel(d.reportPath), strings.TrimSuffix(d.reportPathBase(), ".html"), d.score.Pass, d.score.Fail, d.score.Unknown)
	fmt.Fprintf(tw, "  store\t%s\tSQLite: scan history, actions, approvals, audit log\n", d.rel(d.path("warden.db")))
	fmt.Fprintf(tw, "  audit\t%s\tsigned checkpoint: %d entries, root %s (key %s)\n", d.rel(d.path("checkpoint.txt")), d.audit.Entries, show.Clip(d.audit.Root.String(), 16), d.rel(d.path("audit.key")))
	fmt.Fprintf(tw, "  config\t%s\tthe gates: who approves what\n", d.rel(d.path("warden.yaml")))
	if d.awaitingDecision() > 0 {
		fmt.Fprintf(tw, "  approvals\t%s\tone 'warden approve' per fix waiting for a decision\n", d.rel(d.path("approve.sh")))
	}
	fmt.Fprintf(tw, "  cloud\t%s\tthe simulated clouds as the demo left them\n", d.rel(d.path("world-now.yaml")))
	tw.Flush()

	cfg := d.rel(d.path("warden.yaml"))
	fmt.Fprintln(w, "\nnext")
	if d.hint != "" {
		fmt.Fprintf(w, "  (warden is not on your PATH: %s)\n", d.hint)
	}
	wd := d.warden
	fmt.Fprintf(w, "  %s serve --config %s --sim %s\n      the dashboard on http://127.0.0.1:8080 over the same store; it applies approvals within seconds\n", wd, cfg, d.rel(d.path("world-now.yaml")))
	if it, ok := d.firstAwaiting(); ok {
		fmt.Fprintf(w, "  WARDEN_ACTOR=%s %s approve %s --config %s\n      approve a waiting fix (%s); %s approvals list --config %s shows them all\n",
			shellQuote(d.approverOf(it)), wd, it.Request, cfg, it.Remediator, wd, cfg)
	} else {
		fmt.Fprintf(w, "  %s actions list --config %s\n      every fix, its state and its audit entries; %s rollback ACTION undoes one\n", wd, cfg, wd)
	}
	fmt.Fprintf(w, "  %s audit verify --config %s --audit-key %s --checkpoint %s\n      prove that no audit entry changed since the checkpoint\n", wd, cfg, d.rel(d.path("audit.key")), d.rel(d.path("checkpoint.txt")))
}

func (d *run) reportPathBase() string {
	i := strings.LastIndexByte(d.reportPath, '/')
	return d.reportPath[i+1:]
}

// scopeNames lists the unread scopes.
func scopeNames(res *scan.Result) string {
	names := make([]string, len(res.IncompleteScopes))
	for i, s := range res.IncompleteScopes {
		names[i] = s.ID
	}
	return strings.Join(names, ", ")
}

// byRemediator is "4 aws.iam.set_password_policy, 1 …", most first.
func byRemediator(items []remediate.Item) string {
	if len(items) == 0 {
		return "none"
	}
	n := map[string]int{}
	for _, it := range items {
		n[it.Remediator]++
	}
	names := slices.Collect(maps.Keys(n))
	slices.SortFunc(names, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%d %s", n[name], name)
	}
	return strings.Join(parts, ", ")
}

// approverOf is who may give a waiting request its next approval.
func (d *run) approverOf(it remediate.Item) string {
	req, err := d.e.Gate.Get(context.Background(), it.Request)
	if err != nil {
		return d.you
	}
	for _, dec := range req.Approvals() {
		if dec.Actor == d.you {
			return SecondApprover
		}
	}
	return d.you
}

// waiting groups what still waits by whom it waits for.
func (d *run) waiting() []string {
	var forAnyone, forSecond, approved int
	for _, it := range d.pending {
		if it.State == remediate.StateApproved {
			approved++
			continue
		}
		if d.approverOf(it) == SecondApprover {
			forSecond++
		} else {
			forAnyone++
		}
	}
	var out []string
	if forAnyone > 0 {
		out = append(out, fmt.Sprintf("%s for an approval by you (%s) or %s; critical ones need both", fixes(forAnyone), d.you, SecondApprover))
	}
	if forSecond > 0 {
		out = append(out, fmt.Sprintf("%s you approved for %s's approval too (critical: two approvers)", fixes(forSecond), SecondApprover))
	}
	if approved > 0 {
		out = append(out, fmt.Sprintf("%s approved, beyond this run's blast-radius cap: the next apply (or warden serve) runs them", fixes(approved)))
	}
	return out
}

// awaitingDecision counts the fixes whose requests still wait for an approver.
func (d *run) awaitingDecision() int {
	n := 0
	for _, it := range d.pending {
		if it.State == remediate.StatePending {
			n++
		}
	}
	return n
}

// firstAwaiting is the first fix whose request still waits for an approver.
func (d *run) firstAwaiting() (remediate.Item, bool) {
	for _, it := range d.pending {
		if it.State == remediate.StatePending {
			return it, true
		}
	}
	return remediate.Item{}, false
}
