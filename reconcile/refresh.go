package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Refresh reads one resource again alone — the one a change event names — and judges it
// as a read of its scope would: evaluated, its findings opened or resolved, its state
// kept. A resource the cloud says is gone (collectors.ErrNotFound) is forgotten in scope,
// the scope it was last read in (with "", the one scope the store holds it in), and its
// findings resolved; any other failure of the read changes nothing and is returned
// (collectors.ErrUnsupported: the caller reads the whole scope instead). The rest of the
// scope is untouched.
func (r *Reconciler) Refresh(ctx context.Context, rd collectors.Reader, uid, scope string, accounts []string) (*Outcome, error) {
	res, err := rd.Read(ctx, uid)
	gone := errors.Is(err, collectors.ErrNotFound)
	if err != nil && !gone {
		return nil, fmt.Errorf("refresh %s: %w", uid, err)
	}
	at := r.o.Now().UTC()

	// The resource's scope is its own, or for one gone the scope it was last read in.
	if !gone {
		if res.Scope == "" {
			res.Scope = snapshot.DefaultScope(res.Type, res.Account, res.Region)
		}
		scope = res.Scope
	}
	var prev resourceRecord
	err = r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if scope == "" {
			if scope, err = state.ScopeOf(ctx, q, uid); err != nil {
				return err
			}
		}
		prev, err = resourceFindings(ctx, q, scope, uid)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("refresh %s: %w", uid, err)
	}
	out := &Outcome{Scope: scope, Status: snapshot.ScopeOK}
	if gone && !prev.Known {
		return out, nil // never seen, gone now: nothing to judge
	}
	var found []findings.Finding
	var evalErrs []findings.EvalError
	var hash string
	var data []byte
	if !gone {
		if hash, data, err = hashResource(res); err != nil {
			return nil, err
		}
		h := snapshot.Header{Version: 1, CollectedAt: at, Accounts: accounts}
		ev, err := r.o.Engine.Evaluate(ctx, h, at, []snapshot.Resource{res})
		if err != nil {
			return nil, fmt.Errorf("refresh %s: evaluate: %w", uid, err)
		}
		ws, _ := r.judging()
		scan.ApplyWaivers(ev.Findings, ws, at)
		found, evalErrs = ev.Findings, ev.EvalErrors
		out.Resources, out.Evaluated, out.EvalErrors = 1, 1, evalErrs
		if len(evalErrs) > 0 {
			hash = "" // evaluated again at the next read
		}
	} else {
		out.Deleted = 1
	}

	err = r.o.Store.InTxOn(ctx, scope, func(tx *store.Tx) error {
		*out = Outcome{Scope: out.Scope, Status: out.Status, Resources: out.Resources, Evaluated: out.Evaluated, Deleted: out.Deleted, EvalErrors: out.EvalErrors}
		now, err := resourceFindings(ctx, tx, scope, uid)
		if err != nil {
			return err
		}
		if now.Hash != prev.Hash || now.Known != prev.Known {
			return errConcurrent
		}
		if gone {
			if err := state.DeleteResource(ctx, tx, scope, uid); err != nil {
				return err
			}
		} else if err := state.PutResource(ctx, tx, scope, res, hash, data, at); err != nil {
			return err
		}
		// The scope no longer holds what its last read's tape answers for: its next read
		// is a read, not a replay (reread.go).
		if err := state.PutTape(ctx, tx, scope, nil); err != nil {
			return err
		}
		one := map[string]bool{uid: true}
		j := judgement{scope: scope, at: at, found: found, old: now.Findings, listed: one, complete: true,
			notJudged: scan.NotJudged(r.o.Engine, evalErrs)}
		if gone {
			j.gone = one
		} else {
			j.evaluated = one
		}
		evs, err := r.judge(ctx, tx, j, out)
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			if _, err := r.o.Log.AppendAll(ctx, tx, evs); err != nil {
				return fmt.Errorf("audit %s: %w", uid, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("refresh %s: %w", uid, err)
	}
	return out, nil
}

// resourceRecord is what the store holds of one resource in one scope.
type resourceRecord struct {
	Known    bool // the resource is in the store
	Hash     string
	Findings map[string]state.Finding // not resolved, by fingerprint
}

func resourceFindings(ctx context.Context, q store.Querier, scope, uid string) (resourceRecord, error) {
	var out resourceRecord
	if scope == "" {
		return out, nil
	}
	var err error
	if out.Hash, out.Known, err = state.ResourceHash(ctx, q, scope, uid); err != nil {
		return resourceRecord{}, err
	}
	if out.Findings, err = state.ActiveFindings(ctx, q, scope, uid, nil); err != nil {
		return resourceRecord{}, err
	}
	return out, nil
}
