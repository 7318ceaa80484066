package daemon

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText writes the status as `warden status` prints it: the leader and its term,
// remediation paused or running, the last checkpoint, the approvals waiting, then the
// queue and every scope's last read; ages are judged at now.
func (s *Status) WriteText(w io.Writer, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	ago := func(t time.Time) string { return now.Sub(t).Round(time.Second).String() + " ago" }
	switch {
	case s.Leader == "":
		fmt.Fprintln(tw, "leader:\tnone (no warden serve is reconciling)")
	case s.LeaderUntil.Before(now):
		fmt.Fprintf(tw, "leader:\t%s (term ended %s ago: no replica alive?)\n", s.Leader, now.Sub(s.LeaderUntil).Round(time.Second))
	default:
		fmt.Fprintf(tw, "leader:\t%s (term until %s)\n", s.Leader, s.LeaderUntil.Format(time.RFC3339))
	}
	if s.Paused {
		fmt.Fprintf(tw, "remediation:\tPAUSED by %s: %s\n", s.PausedBy, s.PauseReason)
	} else {
		fmt.Fprintln(tw, "remediation:\trunning")
	}
	if s.Checkpoint != nil {
		fmt.Fprintf(tw, "last checkpoint:\t%d entries, %s ago\n", s.Checkpoint.Size, now.Sub(s.Checkpoint.At).Round(time.Second))
	} else {
		fmt.Fprintln(tw, "last checkpoint:\tnone (warden audit checkpoint signs one)")
	}
	fmt.Fprintf(tw, "pending approvals:\t%d\n", len(s.PendingApproval))
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "QUEUE\tSTATE\tJOBS")
	if len(s.Queue) == 0 {
		fmt.Fprintln(tw, "(empty)\t\t")
	}
	for _, c := range s.Queue {
		fmt.Fprintf(tw, "%s\t%s\t%d\n", c.Kind, c.State, c.Count)
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "SCOPE\tSTATUS\tRESOURCES\tREAD\tLAST COMPLETE")
	for _, sc := range s.Scopes {
		ok := "never"
		if !sc.OKAt.IsZero() {
			ok = ago(sc.OKAt)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", sc.Scope, sc.Status, sc.Resources, ago(sc.ReadAt), ok)
		if sc.Error != "" {
			line += "\t" + sc.Error
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
