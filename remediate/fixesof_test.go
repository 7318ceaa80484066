package remediate_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// FixesOf tells, by finding, where its latest fix stands: waiting for approval, then
// verified once approved and applied; a finding without a fix is absent.
func TestFixesOf_whereEachFindingsFixStands(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(2), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true})
			p := only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 2)
			m := e.Machine("alice", remediate.Limits{})
			res, err := m.Apply(ctx, p, true)
			if err != nil {
				t.Fatal(err)
			}
			fixes := func() map[string]remediate.Standing {
				t.Helper()
				var out map[string]remediate.Standing
				if err := e.Store.Read(ctx, func(q *store.Reader) (err error) { out, err = remediate.FixesOf(ctx, q); return }); err != nil {
					t.Fatal(err)
				}
				return out
			}
			got := fixes()
			if len(got) != 2 {
				t.Fatalf("FixesOf: %d findings, want the 2 planned: %v", len(got), got)
			}
			for _, a := range p.Actions {
				if s := got[a.Finding]; s.ID != a.ID || s.State != remediate.StatePending {
					t.Errorf("finding %s: %+v, want action %s pending approval", a.Finding, s, a.ID)
				}
			}
			first := p.Actions[0]
			if _, err := e.Gate.Decide(ctx, itemOf(t, res, first.ID).Request, "bob", "cli", true, ""); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Apply(ctx, p, true); err != nil {
				t.Fatal(err)
			}
			got = fixes()
			if s := got[first.Finding]; s.State != remediate.StateVerified {
				t.Errorf("approved and applied: %+v", s)
			}
			if s := got[p.Actions[1].Finding]; s.State != remediate.StatePending {
				t.Errorf("undecided: %+v", s)
			}
		})
	}
}
