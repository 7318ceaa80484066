package show

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

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
// saying there are none. The table fits width columns (TableWidth): when the one-line
// rows do not, each request takes two lines, the second its target and part, and long
// cells are cut with "…" (a target from its start, so that the resource it names stays;
// a part in its middle). Width 0 writes everything on one line (--wide).
func Requests(w io.Writer, reqs []gates.Request, withState bool, width int) error {
	if len(reqs) == 0 {
		what := "pending approval requests"
		if withState {
			what = "approval requests"
		}
		_, err := fmt.Fprintf(w, "no %s\n", what)
		return err
	}
	rows := requestRows(reqs, withState, false)
	if width == 0 || fit(rows, make([]column, len(rows[0])), width) {
		tw := tabwriter.NewWriter(w, 0, 4, padding, ' ', 0)
		if _, err := io.WriteString(tw, tabbed(rows)); err != nil {
			return err
		}
		return tw.Flush()
	}
	rows = requestRows(reqs, withState, true)
	cols := []column{{clipNever, 0}, {clipNever, 0}, {clipMiddle, 8}, {clipRight, 5}, {clipNever, 0}, {clipRight, 5}, {clipNever, 0}}
	fit(rows, cols[:len(rows[0])], width)
	lines := aligned(rows)
	var b strings.Builder
	b.WriteString(lines[0] + "\n")
	for i, r := range reqs {
		b.WriteString(lines[i+1] + "\n")
		b.WriteString(targetLine(termesc.Escape(r.Target), termesc.Escape(r.Part), width) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// targetLine is a request's second line in a narrow table: its target and part, cut
// to fit width, the target keeping its end, the part both of its ends.
func targetLine(target, part string, width int) string {
	const indent, label = "    ", "  part "
	room := width - len(indent) - len(label)
	tn, pn := utf8.RuneCountInString(target), utf8.RuneCountInString(part)
	if tn+pn > room {
		pw := min(pn, max(room/3, room-tn, 8))
		tn, pn = max(room-pw, 12), pw
	}
	return indent + cut(target, tn, clipLeft) + label + cut(part, pn, clipMiddle)
}

// RequestTable is Requests as a list command writes it: the state when withState, the
// table fitted to the output (TableWidth), whole when wide.
func RequestTable(withState, wide bool) func(io.Writer, []gates.Request) error {
	return func(w io.Writer, reqs []gates.Request) error {
		return Requests(w, reqs, withState, TableWidth(w, wide))
	}
}

// requestRows are the cells of the requests' table, its header first. Compact rows are
// the first lines of a narrow table, under short headings: no target and part (they
// have the second line), the approvals so far and the decisions in one column (VOTES),
// a shorter expiry, the requester (BY).
func requestRows(reqs []gates.Request, withState, compact bool) [][]string {
	head := []string{"ID", "REMEDIATOR", "TARGET", "PART", "RISK", "REQUESTER", "DECISIONS", "QUORUM", "EXPIRES"}
	if compact {
		head = []string{"ID", "RISK", "FIX", "VOTES", "EXPIRES", "BY"}
	}
	if withState {
		head = append(head, "STATE")
	}
	rows := [][]string{head}
	for _, r := range reqs {
		// Targets and parts are cloud uids, actors come from the environment: escaped,
		// so that none can drive the terminal.
		quorum := fmt.Sprintf("%d/%d", len(r.Approvals()), r.Quorum)
		var row []string
		if compact {
			approvals := quorum
			if len(r.Decisions) > 0 {
				approvals += " " + Decisions(r)
			}
			row = []string{r.ID, r.Risk.String(), termesc.Escape(r.Remediator), approvals, r.ExpiresAt.UTC().Format("01-02 15:04Z"),
				termesc.Escape(r.Requester)}
		} else {
			row = []string{r.ID, termesc.Escape(r.Remediator), termesc.Escape(r.Target), termesc.Escape(r.Part), r.Risk.String(),
				termesc.Escape(r.Requester), Decisions(r), quorum, r.ExpiresAt.UTC().Format(time.RFC3339)}
		}
		if withState {
			row = append(row, string(r.State))
		}
		rows = append(rows, row)
	}
	return rows
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
