package show

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/remediate"
)

// Actions writes the recorded actions as `warden actions list` prints them: one row
// each, long targets, parts and details clipped.
func Actions(w io.Writer, rs []*remediate.Record) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ACTION\tREMEDIATOR\tTARGET\tPART\tRISK\tSTATE\tUPDATED\tDETAIL")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Remediator, Clip(r.Target, 70), Clip(r.Part, 50), r.Risk, r.State,
			r.UpdatedAt.Format(time.RFC3339), Clip(r.Detail, 80))
	}
	return tw.Flush()
}

// Requests writes approval requests as `warden approvals list` prints them: one row
// each, with its state when withState (the list holds decided ones too), or a line
// saying there are none.
func Requests(w io.Writer, reqs []gates.Request, withState bool) error {
	if len(reqs) == 0 {
		what := "pending approval requests"
		if withState {
			what = "approval requests"
		}
		_, err := fmt.Fprintf(w, "no %s\n", what)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := "ID\tREMEDIATOR\tTARGET\tPART\tRISK\tREQUESTER\tDECISIONS\tQUORUM\tEXPIRES"
	if withState {
		head += "\tSTATE"
	}
	fmt.Fprintln(tw, head)
	for _, r := range reqs {
		// Targets and parts are cloud uids, actors come from the environment: escaped,
		// so that none can drive the terminal.
		line := strings.Join([]string{r.ID, termesc.Escape(r.Remediator), termesc.Escape(r.Target), termesc.Escape(r.Part),
			r.Risk.String(), termesc.Escape(r.Requester), Decisions(r), fmt.Sprintf("%d/%d", len(r.Approvals()), r.Quorum),
			r.ExpiresAt.UTC().Format(time.RFC3339)}, "\t")
		if withState {
			line += "\t" + string(r.State)
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// Decisions is a request's decisions so far, "bob approved, carol denied", or "-".
func Decisions(r gates.Request) string {
	if len(r.Decisions) == 0 {
		return "-"
	}
	parts := make([]string, len(r.Decisions))
	for i, d := range r.Decisions {
		verb := "approved"
		if d.Vote == gates.VoteDeny {
			verb = "denied"
		}
		parts[i] = termesc.Escape(d.Actor) + " " + verb
	}
	return strings.Join(parts, ", ")
}

// Decided says where a request stands after a decision: approved (and who runs its
// action, and when), denied, or waiting for more approvals. applier is the warden serve
// replica running on the same database (daemon.Applier), "" when none does.
func Decided(w io.Writer, r gates.Request, applier string) {
	n := len(r.Approvals())
	switch r.State {
	case gates.StateApproved:
		who := "runs on the next warden apply --confirm"
		if applier != "" {
			who = "warden serve (replica " + termesc.Escape(applier) + ") applies it within seconds"
		}
		fmt.Fprintf(w, "request %s approved (%d of %d approvals): %s on %s: %s\n",
			r.ID, n, r.Quorum, termesc.Escape(r.Remediator), termesc.Escape(r.Target), who)
	case gates.StateDenied:
		fmt.Fprintf(w, "request %s denied: %s on %s will not run\n", r.ID, termesc.Escape(r.Remediator), termesc.Escape(r.Target))
	default:
		fmt.Fprintf(w, "approval of request %s recorded (%d of %d approvals): it waits for %d more before %s\n",
			r.ID, n, r.Quorum, r.Quorum-n, r.ExpiresAt.UTC().Format(time.RFC3339))
	}
}
