package dashboard_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// The Access page shows each principal the daemon read: its grants against its use, the
// unused ones with their evidence, and the fix the plan would offer; a principal without
// usage says so; an empty store says how to get the data.
func TestAccessPage(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"](t), fixtureOptions{world: remediatetest.World(1)})
	o := f.options(dashboard.Config{Auth: dashboard.AuthOff})
	reg, err := remediators.NewRegistry(awsfix.NewRightsizeInlinePolicy(nil))
	if err != nil {
		t.Fatal(err)
	}
	o.Fixes = reg
	srv := f.serve(t, o)
	c := srv.client(t, "")
	if r := c.get("/access"); r.StatusCode != 200 || !strings.Contains(r.body, "No IAM principal read yet") {
		t.Fatalf("empty: %d\n%s", r.StatusCode, r.body)
	}
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	var doc any
	_ = json.Unmarshal([]byte(`{"Statement":[{"Effect":"Allow","Action":["s3:*","kms:Decrypt"],"Resource":"*"}]}`), &doc)
	roles := []snapshot.Resource{
		{UID: "arn:aws:iam::111111111111:role/deploy", Type: "aws.iam.role", Name: "deploy", Account: "111111111111", Scope: "aws/111111111111/iam",
			Attributes: map[string]any{"usage": usagetest.Attr(asOf, "s3=2026-11-24", "kms="),
				"inline_policies": []any{map[string]any{"name": "app", "document": doc}}}},
		{UID: "arn:aws:iam::111111111111:role/<script>quiet", Type: "aws.iam.role", Name: "quiet", Account: "111111111111", Scope: "aws/111111111111/iam",
			Attributes: map[string]any{}},
	}
	ctx := context.Background()
	if err := f.env.Store.InTx(ctx, func(tx *store.Tx) error {
		for _, r := range roles {
			data, _ := json.Marshal(r)
			if err := state.PutResource(ctx, tx, r.Scope, r, "h-"+r.Name, data, asOf); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	r := c.get("/access")
	for _, want := range []string{"2 principals, 1 with unused grants, 1 without usage data", "role/deploy", "1 of 2 services",
		"<code>kms</code>: never used since tracking began on 2025-10-27", "<code>aws.iam.rightsize_inline_policy</code> on inline/app removes <code>kms:Decrypt</code>",
		"&lt;script&gt;quiet", `aria-current="page">Access`} {
		if !strings.Contains(r.body, want) {
			t.Errorf("the page lacks %q:\n%s", want, r.body)
		}
	}
	if strings.Contains(r.body, "<script>quiet") {
		t.Error("a uid reached the page unescaped")
	}
}
