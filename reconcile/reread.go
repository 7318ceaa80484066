package reconcile

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Tape returns the tape of the scope's last read when a read at `at` may stand on it
// (collectors.Rereader), nil otherwise. It may when that read was complete and judged
// without error (Observe keeps no other), and when Observe would not evaluate the scope
// in full at `at`: judged with the version judging now, and not yet due (FullEvery). A
// scope due in full is read in full, so that ages move on.
// st and known are the scope's state as Scope returned it.
func (r *Reconciler) Tape(ctx context.Context, st state.Scope, known bool, at time.Time) ([]byte, error) {
	if !r.mayReplay(st, known, at) {
		return nil, nil
	}
	var tape []byte
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		tape, err = state.ReadTape(ctx, q, st.Scope.ID)
		return err
	})
	return tape, err
}

// mayReplay says whether a read at `at` may stand on the tape of the scope's last read.
func (r *Reconciler) mayReplay(st state.Scope, known bool, at time.Time) bool {
	_, version := r.judging()
	return known && st.Scope.Complete() && st.EvaluatedWith == version && at.UTC().Sub(st.FullAt) < r.o.FullEvery
}

// ObserveUnchanged records a read of the scope that found every answer of its last
// read's tape as it was (collectors.Reread.Unchanged): the scope holds what that read
// saw, so nothing is compared, evaluated or judged, and what Observe would have
// recorded of it (the read's time; no resource, finding or audit entry changes) is
// recorded in one small transaction. tape is the tape replayed (Tape), calls the calls
// the replay made. If the scope changed in the store since Tape returned it (another
// observation, a refresh, a new policy version), nothing is recorded and the error
// says so (ErrConcurrent): the scope is to be read again.
func (r *Reconciler) ObserveUnchanged(ctx context.Context, scope string, tape []byte, calls int, at time.Time) (*Outcome, error) {
	if at.IsZero() {
		at = r.o.Now()
	}
	at = at.UTC()
	out := &Outcome{Scope: scope, Status: snapshot.ScopeOK, Replayed: true}
	err := r.o.Store.InTxOn(ctx, scope, func(tx *store.Tx) error {
		st, known, err := state.ReadScope(ctx, tx, scope)
		if err != nil {
			return err
		}
		now, err := state.ReadTape(ctx, tx, scope)
		if err != nil {
			return err
		}
		if len(tape) == 0 || !bytes.Equal(now, tape) || !r.mayReplay(st, known, at) {
			return errConcurrent
		}
		st.Scope.Calls, st.Scope.Throttled, st.Scope.AccessDenied = calls, 0, 0
		st.ReadAt, st.OKAt = at, at
		out.Resources = st.Scope.Resources
		return state.PutScope(ctx, tx, st)
	})
	if err != nil {
		return nil, fmt.Errorf("observe scope %s unchanged: %w", scope, err)
	}
	r.o.Logger.Debug("scope observed unchanged", "scope", scope, "resources", out.Resources, "calls", calls)
	return out, nil
}
