package reconcile_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/store/storetest"
)

// otherAccount is the IAM scope of a second account holding the same AWS-managed
// policies as acme's: their ARNs (arn:aws:iam::aws:policy/…) are the same in both.
func otherAccount(t *testing.T, e *env) reconcile.Observation {
	t.Helper()
	src := e.read(iamScope)
	ob := reconcile.Observation{Scope: src.Scope, Accounts: append(src.Accounts, "222222222222")}
	ob.Scope.ID, ob.Scope.Account = "aws/222222222222/iam", "222222222222"
	for _, r := range src.Resources {
		if !strings.Contains(r.UID, ":iam::aws:policy/") {
			continue
		}
		r.Scope, r.Account = ob.Scope.ID, "222222222222"
		r.Attributes = maps.Clone(r.Attributes)
		r.Attributes["attached_to"] = map[string]any{"users": []any{}, "roles": []any{}, "groups": []any{}}
		ob.Resources = append(ob.Resources, r)
	}
	if len(ob.Resources) == 0 {
		t.Fatal("acme's IAM scope holds no AWS-managed policy")
	}
	ob.Scope.Resources = len(ob.Resources)
	return ob
}

// A uid is unique only within its scope: two accounts reading the same AWS-managed
// policy keep a state each, so reading both again unchanged evaluates nothing in either,
// and one account's change does not touch the other's findings.
func TestObserve_sameUIDInTwoScopes(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, dsn(t), reconcile.Options{})
			mine, theirs := e.read(iamScope), otherAccount(t, e)
			e.observe(mine)
			first := e.observe(theirs)
			if first.Evaluated != len(theirs.Resources) {
				t.Fatalf("first read of %s: %d of %d evaluated", theirs.Scope.ID, first.Evaluated, len(theirs.Resources))
			}
			before := e.statuses(iamScope)

			e.advance(5 * time.Minute)
			for _, ob := range []reconcile.Observation{mine, theirs, mine, theirs} {
				if out := e.observe(ob); out.Evaluated != 0 || len(out.Opened) != 0 || len(out.Resolved) != 0 {
					t.Errorf("%s read again unchanged: %d evaluated, %d opened, %d resolved; want nothing",
						ob.Scope.ID, out.Evaluated, len(out.Opened), len(out.Resolved))
				}
			}
			if after := e.statuses(iamScope); !maps.Equal(before, after) {
				t.Errorf("%s's findings went from %v to %v on reads of another account", iamScope, before, after)
			}

			// The second account drops its policies: the first keeps its own.
			gone := theirs
			gone.Resources = nil
			gone.Scope.Resources = 0
			if out := e.observe(gone); out.Deleted != len(theirs.Resources) {
				t.Errorf("%s lists none of its policies: %d deleted, want %d", theirs.Scope.ID, out.Deleted, len(theirs.Resources))
			}
			if out := e.observe(mine); out.Evaluated != 0 || len(out.Opened) != 0 {
				t.Errorf("%s read again after the other account dropped the policies: %d evaluated, %d opened", iamScope, out.Evaluated, len(out.Opened))
			}
			scope, err := e.r.ScopeOf(context.Background(), theirs.Resources[0].UID)
			if err != nil || scope != iamScope {
				t.Errorf("ScopeOf(%s) = %q, %v; want %s, the one scope holding it now", theirs.Resources[0].UID, scope, err, iamScope)
			}
		})
	}
}
