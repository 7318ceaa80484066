package gcp_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

// TestCollect_workloadIdentityFailures: a pool list or a provider list that fails fails
// the project's iam scope: its providers are unknown, never read as none.
func TestCollect_workloadIdentityFailures(t *testing.T) {
	for _, action := range []string{"ListWorkloadIdentityPools", "ListWorkloadIdentityPoolProviders"} {
		t.Run(action, func(t *testing.T) {
			got := collect(t, world(), []cloudsim.Fault{{Service: "iamadmin", Action: action, Account: "acme-prod", AccessDenied: true}}, gcp.Config{})
			sc := got.scopes["gcp/acme-prod/iam"]
			if sc.Status != "failed" || sc.AccessDenied != 1 || !strings.HasPrefix(sc.Error, "iam."+action+": PermissionDenied") {
				t.Fatalf("scope = %+v, want failed on %s", sc, action)
			}
			for uid := range got.resources {
				if strings.Contains(uid, "workloadIdentityPools") || strings.HasSuffix(uid, "projects/acme-prod") {
					t.Errorf("failed scope reported %s", uid)
				}
			}
			if got.scopes["gcp/acme-dev/iam"].Status != "ok" || got.scopes["gcp/acme-prod/compute"].Status != "ok" {
				t.Errorf("other scopes failed too: %+v", got.scopes)
			}
		})
	}
}

// TestRead_workloadIdentityProvider reads a provider by uid: the answer is what Collect
// reported, and a provider that is not there is collectors.ErrNotFound.
func TestRead_workloadIdentityProvider(t *testing.T) {
	got := collect(t, world(), nil, gcp.Config{})
	_, url := simtest.Start(t, world(), cloudsim.Options{})
	c := gcp.New(gcp.Config{Endpoint: url, RateLimit: 1000, MaxAttempts: 2, BaseBackoff: time.Millisecond})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range []string{"github", "aws"} {
		uid := "//iam.googleapis.com/projects/111111111111/locations/global/workloadIdentityPools/ci/providers/" + id
		r, err := c.Read(ctx, uid)
		if err != nil {
			t.Fatalf("Read(%s): %v", uid, err)
		}
		if g, w := jsonOf(t, r), jsonOf(t, got.resources[uid]); g != w {
			t.Errorf("Read(%s) differs from Collect:\nread    %s\ncollect %s", uid, g, w)
		}
	}
	_, err := c.Read(ctx, "//iam.googleapis.com/projects/111111111111/locations/global/workloadIdentityPools/ci/providers/nope")
	if !errors.Is(err, collectors.ErrNotFound) {
		t.Errorf("Read(missing provider) = %v, want ErrNotFound", err)
	}
}
