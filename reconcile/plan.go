package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// PlanOptions say how the fixes of a scope's findings are planned.
type PlanOptions struct {
	Registry *remediators.Registry
	Gates    gates.Config
	// Accounts are the organisation's, for the plan's header.
	Accounts []string
}

// Plan plans the fixes of the scope's open findings, as `warden plan` would from a
// snapshot holding the scope as last read. A scope whose last read was not complete plans
// nothing but notices: nothing is changed on a partial view.
func (r *Reconciler) Plan(ctx context.Context, scope string, o PlanOptions) (*remediate.Plan, error) {
	var st state.Scope
	var known bool
	var open []findings.Finding
	var resources map[string]snapshot.Resource
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if st, known, err = state.ReadScope(ctx, q, scope); err != nil || !known {
			return err
		}
		fs, err := state.ActiveFindings(ctx, q, scope, "", nil)
		if err != nil {
			return err
		}
		for _, fp := range sortedKeys(fs) {
			if fs[fp].Status == findings.StatusOpen {
				f := fs[fp].Finding
				f.Status, f.FirstSeen = findings.StatusOpen, fs[fp].OpenedAt
				open = append(open, f)
			}
		}
		var uids []string
		seen := map[string]bool{}
		for _, f := range open {
			if !seen[f.Resource] {
				seen[f.Resource] = true
				uids = append(uids, f.Resource)
			}
		}
		resources, err = state.Resources(ctx, q, scope, uids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("plan scope %s: %w", scope, err)
	}
	if !known {
		return nil, fmt.Errorf("plan scope %s: it was never read", scope)
	}
	findings.Sort(open)
	h := snapshot.Header{Version: 1, CollectedAt: st.ReadAt, Accounts: o.Accounts, Scopes: []snapshot.Scope{st.Scope}}
	return remediate.NewPlan(remediate.PlanInput{
		Header: h, Name: "scope " + scope, Findings: open,
		Resource: func(uid string) (snapshot.Resource, bool) { res, ok := resources[uid]; return res, ok },
		Complete: func(id string) bool { return id == scope && st.Scope.Complete() },
		Registry: o.Registry, Gates: o.Gates, Actor: r.o.Actor, Now: r.o.Now().UTC(),
	})
}

// Findings returns the findings of a scope that are not resolved, oldest first.
func (r *Reconciler) Findings(ctx context.Context, scope string) ([]state.Finding, error) {
	var out []state.Finding
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		fs, err := state.ActiveFindings(ctx, q, scope, "", nil)
		for _, fp := range sortedKeys(fs) {
			out = append(out, fs[fp])
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sortByOpened(out)
	return out, nil
}

// Scope returns the scope's state, and false if it was never read.
func (r *Reconciler) Scope(ctx context.Context, scope string) (state.Scope, bool, error) {
	var st state.Scope
	var ok bool
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		st, ok, err = state.ReadScope(ctx, q, scope)
		return err
	})
	return st, ok, err
}

// sortByOpened orders findings oldest first, stable over the fingerprint order they
// come in.
func sortByOpened(fs []state.Finding) {
	slices.SortStableFunc(fs, func(a, b state.Finding) int { return a.OpenedAt.Compare(b.OpenedAt) })
}

// Accounts lists the AWS accounts and GCP projects of the scopes read so far: the
// organisation's, which policies treat as known, for a change event judged between
// sweeps.
func (r *Reconciler) Accounts(ctx context.Context) ([]string, error) {
	var ids []string
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		ids, err = state.ScopeIDs(ctx, q)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list the accounts read: %w", err)
	}
	// An event asks for them: a set, since an organisation has thousands of scopes.
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		parts := strings.SplitN(id, "/", 3)
		if len(parts) < 3 || (parts[0] != "aws" && parts[0] != "gcp") || parts[1] == "folders" || parts[1] == "organizations" {
			continue
		}
		if !seen[parts[1]] {
			seen[parts[1]] = true
			out = append(out, parts[1])
		}
	}
	slices.Sort(out)
	return out, nil
}

// ScopeOf returns the scope a resource was last read in, or "" if it never was or was
// read in several (an AWS-managed policy's ARN is the same in every account).
func (r *Reconciler) ScopeOf(ctx context.Context, uid string) (string, error) {
	var scope string
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		scope, err = state.ScopeOf(ctx, q, uid)
		return err
	})
	return scope, err
}
