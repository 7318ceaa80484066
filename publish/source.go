package publish

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// ErrNothingRead is returned by Read when the store holds neither a daemon's state nor a
// scan: there is nothing to publish yet, and publishing nothing would resolve
// everything sent before.
var ErrNothingRead = errors.New("no scan and no daemon read yet: nothing to publish")

// Source names where Read found the findings.
type Source string

// The sources of Read.
const (
	SourceDaemon  Source = "daemon state"
	SourceHistory Source = "scan history"
)

// Read returns the findings as they stand, with each one's fix: the daemon's state
// (every finding not resolved) when warden serve has read a scope, else the latest scan
// of the history. A finding the source no longer holds is resolved (Run sends it so).
func Read(ctx context.Context, st *store.Store) ([]Item, Source, error) {
	var fs []findings.Finding
	var fixes map[string]remediate.Standing
	src := SourceDaemon
	err := st.Read(ctx, func(q *store.Reader) error {
		n, err := state.CountScopes(ctx, q)
		if err != nil {
			return err
		}
		if n > 0 {
			rows, err := state.Findings(ctx, q, func(l state.Life) bool { return l.Status != findings.StatusResolved })
			if err != nil {
				return err
			}
			for _, r := range rows {
				f := r.Finding
				f.Status = r.Status
				if f.FirstSeen.IsZero() {
					f.FirstSeen = r.OpenedAt
				}
				fs = append(fs, f)
			}
		} else {
			src = SourceHistory
			scans, err := st.Scans(ctx, 1)
			if err != nil {
				return err
			}
			if len(scans) == 0 {
				return ErrNothingRead
			}
			if fs, err = st.Findings(ctx, scans[0].ID); err != nil {
				return err
			}
		}
		fixes, err = remediate.FixesOf(ctx, q)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("read the findings to publish: %w", err)
	}
	findings.Sort(fs)
	out := make([]Item, len(fs))
	for i, f := range fs {
		out[i] = Item{Finding: f}
		if s, ok := fixes[f.Fingerprint]; ok {
			out[i].Fix = &Fix{Action: f.Remediation.Action, ID: s.ID, State: string(s.State)}
		} else if f.Remediation.Action != "" {
			out[i].Fix = &Fix{Action: f.Remediation.Action}
		}
	}
	return out, src, nil
}
