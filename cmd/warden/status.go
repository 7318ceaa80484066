package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// status is what `warden status` reports of a deployment, from its database.
type status struct {
	Leader          string            `json:"leader,omitempty"`
	LeaderUntil     time.Time         `json:"leader_until,omitzero"`
	Paused          bool              `json:"paused"`
	PausedBy        string            `json:"paused_by,omitempty"`
	PauseReason     string            `json:"pause_reason,omitempty"`
	Queue           []daemon.JobCount `json:"queue"`
	Scopes          []scopeStatus     `json:"scopes"`
	PendingApproval []gates.Request   `json:"pending_approvals"`
	Checkpoint      *checkpointStatus `json:"last_checkpoint,omitempty"`
}

type scopeStatus struct {
	Scope     string    `json:"scope"`
	Status    string    `json:"status"`
	Error     string    `json:"error,omitempty"`
	Resources int       `json:"resources"`
	ReadAt    time.Time `json:"read_at"`
	OKAt      time.Time `json:"ok_at,omitzero"`
}

type checkpointStatus struct {
	Size int64     `json:"size"`
	At   time.Time `json:"at"`
}

func (a *app) statusCmd() *cobra.Command {
	var af actionFlags
	var format string
	cmd := &cobra.Command{
		Use:   "status [--format table|json]",
		Short: "Show how a running deployment converges: leader, queue, scopes, approvals",
		Long: `Show what warden serve's database says of the deployment: the replica leading the
job queue (it runs the schedules) and until when, whether remediation is paused, the
jobs waiting or running by kind, the last read of every scope and its outcome (ok,
partial, failed: a failed scope's findings are unknown, not resolved), the approval
requests waiting for a decision, and the last signed audit checkpoint. It reads the
database only; it works with serve running or not.`,
		Example: `  warden status --db postgres://warden@db/warden
  warden status --format json | jq '.scopes[] | select(.status != "ok")'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return usageErr(fmt.Errorf("--format: unknown format %q (want table or json)", format))
			}
			cfg := &config.Config{}
			if af.configFile != "" {
				c, err := config.Load(af.configFile)
				if err != nil {
					return usageErr(err)
				}
				cfg = c
			}
			st, err := openHistory(cmd.Context(), af.dbPath, cfg, false)
			if err != nil {
				return err
			}
			defer st.Close()
			m := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{}), Logger: a.log})
			s, err := readStatus(cmd.Context(), st, m.Paused)
			if err != nil {
				return err
			}
			if format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(s)
			}
			printStatus(a, s)
			return nil
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&format, "format", "f", "table", "output format: table or json")
	return cmd
}

func readStatus(ctx context.Context, st *store.Store, paused func(context.Context) (remediate.Pause, error)) (*status, error) {
	s := &status{Queue: []daemon.JobCount{}, Scopes: []scopeStatus{}, PendingApproval: []gates.Request{}}
	var err error
	if s.Leader, s.LeaderUntil, err = daemon.Leader(ctx, st); err != nil {
		return nil, err
	}
	p, err := paused(ctx)
	if err != nil {
		return nil, err
	}
	s.Paused, s.PausedBy, s.PauseReason = p.Paused, p.Actor, p.Reason
	q, err := daemon.Depth(ctx, st)
	if err != nil {
		return nil, err
	}
	s.Queue = append(s.Queue, q...)
	scopes, err := reconcile.Scopes(ctx, st)
	if err != nil {
		return nil, err
	}
	for _, sc := range scopes {
		s.Scopes = append(s.Scopes, scopeStatus{Scope: sc.Scope.ID, Status: sc.Scope.Status, Error: sc.Scope.Error,
			Resources: sc.Scope.Resources, ReadAt: sc.ReadAt, OKAt: sc.OKAt})
	}
	reqs, err := gates.New(st, nil, gates.Config{}, time.Now).List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
	if err != nil {
		return nil, err
	}
	s.PendingApproval = append(s.PendingApproval, reqs...)
	err = st.Read(ctx, func(q *store.Reader) error {
		var c checkpointStatus
		var at string
		err := q.QueryRowContext(ctx, `SELECT size, created_at FROM audit_checkpoints ORDER BY id DESC LIMIT 1`).Scan(&c.Size, &at)
		if err != nil {
			return err
		}
		if c.At, err = store.ParseTime(at); err != nil {
			return err
		}
		s.Checkpoint = &c
		return nil
	})
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read the last checkpoint: %w", err)
	}
	return s, nil
}

func printStatus(a *app, s *status) {
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	defer w.Flush()
	switch {
	case s.Leader == "":
		fmt.Fprintln(w, "leader:\tnone (no warden serve is reconciling)")
	case time.Until(s.LeaderUntil) < 0:
		fmt.Fprintf(w, "leader:\t%s (term ended %s ago: no replica alive?)\n", s.Leader, time.Since(s.LeaderUntil).Round(time.Second))
	default:
		fmt.Fprintf(w, "leader:\t%s (term until %s)\n", s.Leader, s.LeaderUntil.Format(time.RFC3339))
	}
	if s.Paused {
		fmt.Fprintf(w, "remediation:\tPAUSED by %s: %s\n", s.PausedBy, s.PauseReason)
	} else {
		fmt.Fprintln(w, "remediation:\trunning")
	}
	if s.Checkpoint != nil {
		fmt.Fprintf(w, "last checkpoint:\t%d entries, %s ago\n", s.Checkpoint.Size, time.Since(s.Checkpoint.At).Round(time.Second))
	} else {
		fmt.Fprintln(w, "last checkpoint:\tnone (warden audit checkpoint signs one)")
	}
	fmt.Fprintf(w, "pending approvals:\t%d\n", len(s.PendingApproval))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "QUEUE\tSTATE\tJOBS")
	if len(s.Queue) == 0 {
		fmt.Fprintln(w, "(empty)\t\t")
	}
	for _, c := range s.Queue {
		fmt.Fprintf(w, "%s\t%s\t%d\n", c.Kind, c.State, c.Count)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SCOPE\tSTATUS\tRESOURCES\tREAD\tLAST COMPLETE")
	for _, sc := range s.Scopes {
		ok := "never"
		if !sc.OKAt.IsZero() {
			ok = ago(sc.OKAt)
		}
		line := fmt.Sprintf("%s\t%s\t%d\t%s\t%s", sc.Scope, sc.Status, sc.Resources, ago(sc.ReadAt), ok)
		if sc.Error != "" {
			line += "\t" + sc.Error
		}
		fmt.Fprintln(w, line)
	}
}

func ago(t time.Time) string { return time.Since(t).Round(time.Second).String() + " ago" }
