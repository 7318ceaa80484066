package dashboard_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/reconcile/events"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/reconcile/watch"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// A finding of the watch after a right-sizing (its principal denied what a fix removed)
// offers an admin the fix's rollback in one click, on the findings page; an approver
// sees no button; the click rolls the fix back through warden's one rollback path.
func TestFindings_watchFindingOffersTheRollback(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, storetest.Backends(t)["sqlite"](t), fixtureOptions{world: remediatetest.World(2),
		config: dashboard.Config{Auth: dashboard.AuthRequired}, daemon: true})
	id := f.applied[0]
	rec, err := f.env.Machine("x", remediate.Limits{}).Action(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	principal := "arn:aws:iam::111111111111:user/app"
	wf := watch.Finding(watch.Match{Denial: events.Denial{Provider: "aws", Account: "111111111111", Principal: principal,
		Actions: []string{"kms:Decrypt"}, Event: "kms:Decrypt", Code: "AccessDenied", At: time.Now().UTC(), Source: "ev-1"},
		Fix: rec, Denied: "kms:Decrypt", Removed: "kms:*"})
	if err := f.env.Store.InTx(ctx, func(tx *store.Tx) error {
		return state.PutFinding(ctx, tx, state.Finding{Finding: wf, Status: findings.StatusOpen, OpenedAt: time.Now().UTC(), SeenAt: time.Now().UTC()})
	}); err != nil {
		t.Fatal(err)
	}
	button := `id="rollback-` + id + `"`

	carol := f.client(t, "")
	carol.login(f.tokens["carol"])
	if page := carol.get("/findings?policy=" + watch.PolicyID); !strings.Contains(page.body, watch.PolicyID) || strings.Contains(page.body, button) {
		t.Fatalf("an approver's findings page: the finding shown %v, a rollback button %v",
			strings.Contains(page.body, watch.PolicyID), strings.Contains(page.body, button))
	}

	adam := f.client(t, "")
	adam.login(f.tokens["adam"])
	page := adam.get("/findings?policy=" + watch.PolicyID)
	if !strings.Contains(page.body, button) {
		t.Fatalf("no rollback button on the admin's findings page:\n%s", page.body)
	}
	if r := adam.post("/actions/"+id+"/rollback", url.Values{"csrf": {adam.csrf("/findings")}}); r.StatusCode != 303 {
		t.Fatalf("rollback: %d", r.StatusCode)
	}
	if rec, err := f.env.Machine("x", remediate.Limits{}).Action(ctx, id); err != nil || rec.State != remediate.StateRolledBack {
		t.Fatalf("after the click: %+v %v", rec, err)
	}
	f.verifyAudit(t)
}
