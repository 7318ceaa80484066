package reconcile_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store/storetest"
)

// A change event names one resource: Refresh reads it again through the AWS collector
// (the official SDK against the simulator) and judges it alone. A key deactivated in the
// cloud resolves its findings; a key deleted is forgotten and resolved; a read that is
// denied changes nothing and says so; the rest of the scope is untouched.
func TestRefresh_oneResourceThroughTheSimulator(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			w, err := cloudsim.LoadWorld(filepath.Join("..", "fixtures", "acme", "world.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			sim, url := simtest.Start(t, w, cloudsim.Options{})
			sdk := simtest.AWSConfig(url)
			col := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk, Regions: []string{"us-east-1"}})
			var sink collectors.MemorySink
			if err := col.Collect(ctx, &sink); err != nil {
				t.Fatal(err)
			}
			ob := reconcile.Observation{Accounts: []string{"111111111111"}}
			for _, sc := range sink.Scopes {
				if sc.ID == iamScope {
					ob.Scope = sc
				}
			}
			for _, r := range sink.Resources {
				if r.Scope == iamScope {
					ob.Resources = append(ob.Resources, r)
				}
			}
			if ob.Scope.Status != snapshot.ScopeOK || len(ob.Resources) == 0 {
				t.Fatalf("the collected IAM scope: %+v, %d resources", ob.Scope, len(ob.Resources))
			}

			eng, err := pack()
			if err != nil {
				t.Fatal(err)
			}
			st := storetest.Open(t, dsn(t))
			log := audit.New(st, audit.Options{})
			r := reconcile.New(reconcile.Options{Store: st, Log: log, Engine: eng})
			first, err := r.Observe(ctx, ob)
			if err != nil {
				t.Fatal(err)
			}
			keyUID := "arn:aws:iam::111111111111:user/svc-backup-export/accesskey/" + oldKey
			onKey := 0
			for _, f := range first.Opened {
				if f.Resource == keyUID {
					onKey++
				}
			}
			if onKey == 0 {
				t.Fatalf("no finding on %s among %d opened", keyUID, len(first.Opened))
			}

			// Denied: nothing changes, the error says why.
			if err := sim.SetFaults([]cloudsim.Fault{{Service: "iam", AccessDenied: true}}, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := r.Refresh(ctx, col, keyUID, "", ob.Accounts); err == nil || errors.Is(err, collectors.ErrNotFound) {
				t.Errorf("refresh while IAM denies: %v, want an error that is not ErrNotFound", err)
			}
			if err := sim.SetFaults(nil, nil); err != nil {
				t.Fatal(err)
			}
			if n := count(t, r, keyUID, findings.StatusOpen); n != onKey {
				t.Errorf("after a denied refresh, %d findings open on the key, want %d", n, onKey)
			}

			// Deactivated in the cloud: its findings resolve.
			cl := iam.NewFromConfig(sdk)
			if _, err := cl.UpdateAccessKey(ctx, &iam.UpdateAccessKeyInput{UserName: aws.String("svc-backup-export"),
				AccessKeyId: aws.String(oldKey), Status: iamtypes.StatusTypeInactive}); err != nil {
				t.Fatal(err)
			}
			out, err := r.Refresh(ctx, col, keyUID, "", ob.Accounts)
			if err != nil {
				t.Fatal(err)
			}
			if out.Evaluated != 1 || len(out.Resolved) != onKey || len(out.Opened) != 0 {
				t.Errorf("refresh of the deactivated key: %d evaluated, %d resolved, %d opened; want 1, %d, 0", out.Evaluated, len(out.Resolved), len(out.Opened), onKey)
			}

			// Deleted: forgotten, and nothing left open on it.
			if _, err := cl.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: aws.String("svc-backup-export"), AccessKeyId: aws.String(oldKey)}); err != nil {
				t.Fatal(err)
			}
			if out, err = r.Refresh(ctx, col, keyUID, "", ob.Accounts); err != nil || out.Deleted != 1 {
				t.Fatalf("refresh of the deleted key: %+v %v", out, err)
			}
			fs, err := r.Findings(ctx, iamScope)
			if err != nil {
				t.Fatal(err)
			}
			others := 0
			for _, f := range fs {
				if f.Finding.Resource == keyUID {
					t.Errorf("finding %s still %s on the deleted key", f.Finding.Policy, f.Status)
				}
				if f.Status == findings.StatusOpen {
					others++
				}
			}
			if others != len(first.Opened)-onKey {
				t.Errorf("%d findings open on the rest of the scope, want %d untouched", others, len(first.Opened)-onKey)
			}
			// The next read of the whole scope agrees: nothing to evaluate but what the
			// user's key listing changed, nothing opened.
			sink = collectors.MemorySink{}
			if err := col.Collect(ctx, &sink); err != nil {
				t.Fatal(err)
			}
			again := reconcile.Observation{Scope: ob.Scope, Accounts: ob.Accounts}
			for _, r := range sink.Resources {
				if r.Scope == iamScope {
					again.Resources = append(again.Resources, r)
				}
			}
			next, err := r.Observe(ctx, again)
			if err != nil {
				t.Fatal(err)
			}
			if len(next.Opened) != 0 || next.Deleted != 0 {
				t.Errorf("the full read after the refreshes: %d opened, %d deleted; want none", len(next.Opened), next.Deleted)
			}
			for _, f := range next.Resolved {
				if !strings.Contains(f.Finding.Resource, "svc-backup-export") {
					t.Errorf("the full read resolved %s on %s", f.Finding.Policy, f.Finding.Resource)
				}
			}
		})
	}
}

// count is the number of the scope's findings on uid with this status.
func count(t *testing.T, r *reconcile.Reconciler, uid, status string) int {
	t.Helper()
	fs, err := r.Findings(context.Background(), iamScope)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range fs {
		if f.Finding.Resource == uid && f.Status == status {
			n++
		}
	}
	return n
}
