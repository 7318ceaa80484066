package scan

import (
	"context"
	"fmt"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Completeness says whether a scope was read in full in a snapshot. A snapshot that
// declares no scopes presents itself as the whole world: every scope is complete.
func Completeness(h snapshot.Header) func(scope string) bool {
	if len(h.Scopes) == 0 {
		return func(string) bool { return true }
	}
	status := map[string]string{}
	for _, s := range h.Scopes {
		status[s.ID] = s.Status
	}
	return func(scope string) bool { return status[scope] == snapshot.ScopeOK }
}

// Errored says whether evaluating a policy on a resource failed, from a scan's eval
// errors: such a pair was not judged. An error without a policy (the resource's policies
// could not be prepared) covers every policy on its resource. Policy and resource are
// compared as valid text (findings.ValidText), as the history stores them.
func Errored(errs []findings.EvalError) func(policy, resource string) bool {
	if len(errs) == 0 {
		return func(string, string) bool { return false }
	}
	type pair struct{ policy, resource string }
	failed := make(map[pair]bool, len(errs))
	for _, e := range errs {
		failed[pair{findings.ValidText(e.Policy), findings.ValidText(e.Resource)}] = true
	}
	return func(policy, resource string) bool {
		return failed[pair{policy, resource}] || failed[pair{"", resource}] || failed[pair{policy, ""}] || failed[pair{}]
	}
}

// NotJudged says whether a policy × resource pair went unjudged in a scan: its policy
// failed on the resource (Errored), or the policy was not loaded this time (removed, or
// left out with --no-builtin). Neither may resolve an earlier finding: only a policy
// that ran and found nothing does.
func NotJudged(e *engine.Engine, errs []findings.EvalError) func(policy, resource string) bool {
	errored := Errored(errs)
	loaded := map[string]bool{}
	for _, p := range e.Policies() {
		loaded[findings.ValidText(p.ID)] = true
	}
	return func(policy, resource string) bool { return !loaded[policy] || errored(policy, resource) }
}

// DiffLatest compares the two newest scans of the history.
func DiffLatest(ctx context.Context, st *store.Store) (prev, cur store.ScanRecord, d findings.Diff, err error) {
	scans, err := st.Scans(ctx, 2)
	if err != nil {
		return prev, cur, d, err
	}
	if len(scans) < 2 {
		return prev, cur, d, fmt.Errorf("findings diff: the history has %d scan(s); run warden scan twice first: %w", len(scans), store.ErrNoScans)
	}
	cur, prev = scans[0], scans[1]
	before, err := st.Findings(ctx, prev.ID)
	if err != nil {
		return prev, cur, d, err
	}
	after, err := st.Findings(ctx, cur.ID)
	if err != nil {
		return prev, cur, d, err
	}
	return prev, cur, findings.Compare(before, after), nil
}
