package reconcile

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
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
	var st ScopeState
	var known bool
	var open []findings.Finding
	resources := map[string]snapshot.Resource{}
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if st, known, err = readScope(ctx, q, scope); err != nil || !known {
			return err
		}
		fs, err := scopeFindings(ctx, q, scope)
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
		for _, f := range open {
			if _, ok := resources[f.Resource]; ok {
				continue
			}
			res, ok, err := readResource(ctx, q, scope, f.Resource)
			if err != nil {
				return err
			}
			if ok {
				resources[f.Resource] = res
			}
		}
		return nil
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
func (r *Reconciler) Findings(ctx context.Context, scope string) ([]FindingState, error) {
	var out []FindingState
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		fs, err := scopeFindings(ctx, q, scope)
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
func (r *Reconciler) Scope(ctx context.Context, scope string) (ScopeState, bool, error) {
	var st ScopeState
	var ok bool
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		st, ok, err = readScope(ctx, q, scope)
		return err
	})
	return st, ok, err
}

func readResource(ctx context.Context, q querier, scope, uid string) (snapshot.Resource, bool, error) {
	var data string
	err := q.QueryRowContext(ctx, `SELECT data FROM resource_state WHERE scope = ? AND uid = ?`, scope, uid).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return snapshot.Resource{}, false, nil
	}
	if err != nil {
		return snapshot.Resource{}, false, fmt.Errorf("read resource %s: %w", uid, err)
	}
	var res snapshot.Resource
	if err := json.Unmarshal([]byte(data), &res); err != nil {
		return snapshot.Resource{}, false, fmt.Errorf("read resource %s: %w", uid, err)
	}
	return res, true, nil
}

// sortByOpened orders findings oldest first, stable over the fingerprint order they
// come in.
func sortByOpened(fs []FindingState) {
	slices.SortStableFunc(fs, func(a, b FindingState) int { return a.OpenedAt.Compare(b.OpenedAt) })
}

// Accounts lists the AWS accounts and GCP projects of the scopes read so far: the
// organisation's, which policies treat as known, for a change event judged between
// sweeps.
func (r *Reconciler) Accounts(ctx context.Context) ([]string, error) {
	var out []string
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT scope FROM scope_state`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			parts := strings.Split(id, "/")
			if len(parts) < 3 || (parts[0] != "aws" && parts[0] != "gcp") || parts[1] == "folders" || parts[1] == "organizations" {
				continue
			}
			if !slices.Contains(out, parts[1]) {
				out = append(out, parts[1])
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list the accounts read: %w", err)
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
		scope, err = scopeOf(ctx, q, uid)
		return err
	})
	return scope, err
}

// Scopes returns the state of every scope read so far, by id.
func Scopes(ctx context.Context, st *store.Store) ([]ScopeState, error) {
	var out []ScopeState
	err := st.Read(ctx, func(q *store.Reader) error {
		rows, err := q.QueryContext(ctx, `SELECT data, read_at, ok_at, evaluated_with, full_at FROM scope_state ORDER BY scope`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			s, err := scanScope(rows)
			if err != nil {
				return err
			}
			out = append(out, s)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("list the scopes: %w", err)
	}
	return out, nil
}
