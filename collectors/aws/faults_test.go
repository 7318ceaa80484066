package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"

	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

func TestCollectOrganization(t *testing.T) {
	w := world()
	// 333333333333 never got the role: it cannot be assumed into.
	acct := w.AWS.Accounts[2]
	acct.Roles = slices.DeleteFunc(acct.Roles, func(r *cloudsim.Role) bool { return r.Name == "OrganizationAccountAccessRole" })
	r, _ := collect(t, w, awscollector.Config{Org: true})
	if !slices.Equal(r.ids, []string{"111111111111", "222222222222", "333333333333"}) {
		t.Errorf("accounts = %v", r.ids)
	}
	for _, id := range []string{"aws/222222222222/iam", "aws/222222222222/ec2/eu-west-1", "aws/111111111111/acm/us-east-1"} {
		if s := r.scopes[id]; s.Status != snapshot.ScopeOK {
			t.Errorf("scope %s = %+v, want ok", id, s)
		}
	}
	if _, ok := r.byUID["arn:aws:iam::222222222222:user/alice"]; !ok {
		t.Error("member account 222222222222 was not collected")
	}
	for _, svc := range []string{"iam", "ec2", "acm"} {
		s := r.scopes["aws/333333333333/"+svc]
		if s.Status != snapshot.ScopeFailed || s.Error == "" {
			t.Errorf("scope of the unassumable account %s = %+v, want failed with an error", svc, s)
		}
	}
	for uid, res := range r.byUID {
		if res.Account == "333333333333" {
			t.Errorf("resource %s of an account that could not be read", uid)
		}
	}
}

func TestCollectFaults(t *testing.T) {
	w := world()
	w.AWS.Organization = nil
	w.AWS.Accounts = w.AWS.Accounts[:1]
	clean, _ := collect(t, w, awscollector.Config{})

	tests := []struct {
		name   string
		faults []cloudsim.Fault
		check  func(t *testing.T, r result, sim *cloudsim.Sim)
	}{
		{"access denied in one region", []cloudsim.Fault{{Service: "ec2", Action: "DescribeSecurityGroups", Region: "us-east-1", AccessDenied: true}},
			func(t *testing.T, r result, _ *cloudsim.Sim) {
				s := r.scopes["aws/111111111111/ec2/us-east-1"]
				if s.Status != snapshot.ScopeFailed || s.AccessDenied != 1 || s.Resources != 0 {
					t.Errorf("denied scope = %+v, want failed, access_denied 1, no resources", s)
				}
				if _, ok := r.byUID["arn:aws:ec2:us-east-1:111111111111:security-group/sg-0000000000000001"]; ok {
					t.Error("a group of the denied scope was reported")
				}
				if s := r.scopes["aws/111111111111/ec2/eu-west-1"]; s.Status != snapshot.ScopeOK || s.Resources != 1 {
					t.Errorf("other region = %+v, want ok with 1 group", s)
				}
			}},
		{"regions cannot be listed", []cloudsim.Fault{{Service: "ec2", Action: "DescribeRegions", AccessDenied: true}},
			func(t *testing.T, r result, _ *cloudsim.Sim) {
				for _, id := range []string{"aws/111111111111/ec2", "aws/111111111111/acm"} {
					if s := r.scopes[id]; s.Status != snapshot.ScopeFailed || !strings.Contains(s.Error, "DescribeRegions") {
						t.Errorf("scope %s = %+v, want failed naming DescribeRegions", id, s)
					}
				}
				if s := r.scopes["aws/111111111111/iam"]; s.Status != snapshot.ScopeOK {
					t.Errorf("iam = %+v, want ok", s)
				}
				// The one denied DescribeRegions attempt is counted once, by the ec2 scope.
				if s := r.scopes["aws/111111111111/ec2"]; s.AccessDenied != 1 || s.Calls != 1 {
					t.Errorf("ec2 scope counts %d denied of %d calls, want 1 of 1", s.AccessDenied, s.Calls)
				}
				if s := r.scopes["aws/111111111111/acm"]; s.AccessDenied != 0 || s.Calls != 0 {
					t.Errorf("acm scope counts %d denied of %d calls of EC2's, want none", s.AccessDenied, s.Calls)
				}
			}},
		{"a region down", []cloudsim.Fault{{Service: "ec2", Region: "eu-west-1", ErrorRate: 1}},
			func(t *testing.T, r result, _ *cloudsim.Sim) {
				if s := r.scopes["aws/111111111111/ec2/eu-west-1"]; s.Status != snapshot.ScopeFailed {
					t.Errorf("down region = %+v, want failed", s)
				}
				if s := r.scopes["aws/111111111111/iam"]; s.Status != snapshot.ScopeOK {
					t.Errorf("iam = %+v, want ok", s)
				}
			}},
		{"credential report denied", []cloudsim.Fault{{Service: "iam", Action: "*CredentialReport", AccessDenied: true}},
			func(t *testing.T, r result, _ *cloudsim.Sim) {
				s := r.scopes["aws/111111111111/iam"]
				if s.Status != snapshot.ScopePartial || s.AccessDenied == 0 {
					t.Errorf("iam = %+v, want partial with access denied counted", s)
				}
				if _, ok := r.byUID["arn:aws:iam::111111111111:user/alice"]; !ok {
					t.Error("users must still be reported when only the credential report is missing")
				}
			}},
		{"throttling storm", []cloudsim.Fault{{ThrottleRate: 0.3}, {ErrorRate: 0.05}},
			func(t *testing.T, r result, sim *cloudsim.Sim) {
				same(t, clean, r)
				throttled := 0
				for _, s := range r.scopes {
					throttled += s.Throttled
					if s.Status != snapshot.ScopeOK {
						t.Errorf("scope %s = %+v, want ok after retries", s.ID, s)
					}
				}
				if throttled == 0 {
					t.Error("no throttled call was counted")
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world()
			w.AWS.Organization = nil
			w.AWS.Accounts = w.AWS.Accounts[:1]
			w.Faults = tc.faults
			w.Seed = 7
			r, sim := collect(t, w, awscollector.Config{MaxAttempts: 25})
			tc.check(t, r, sim)
		})
	}
}

// same fails unless both collections read the same resources.
func same(t *testing.T, want, got result) {
	t.Helper()
	wk, gk := slices.Sorted(maps.Keys(want.byUID)), slices.Sorted(maps.Keys(got.byUID))
	if !slices.Equal(wk, gk) {
		t.Fatalf("resources differ:\nwant %v\ngot  %v", wk, gk)
	}
	for _, k := range wk {
		a, _ := json.Marshal(want.byUID[k])
		b, _ := json.Marshal(got.byUID[k])
		if string(a) != string(b) {
			t.Errorf("%s differs:\nwant %s\ngot  %s", k, a, b)
		}
	}
}

// TestCollectCancelled stops a slow collection half-way: Collect returns the context's
// error at once, and no scope that was cut short is reported as complete.
func TestCollectCancelled(t *testing.T) {
	w := world()
	w.AWS.Organization = nil
	w.AWS.Accounts = w.AWS.Accounts[:1]
	w.Latency = cloudsim.Duration(300 * time.Millisecond)
	_, url := simtest.Start(t, w, cloudsim.Options{})
	sdk := simtest.AWSConfig(url)
	c := awscollector.New(awscollector.Config{Endpoint: url, AWS: &sdk})
	if _, err := c.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var sink collectors.MemorySink
	start := time.Now()
	err := c.Collect(ctx, &sink)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Collect = %v, want the context's error", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Collect took %v after cancellation", d)
	}
	for _, s := range sink.Scopes {
		if s.Status == snapshot.ScopeOK && s.Service == "iam" {
			t.Errorf("scope %s cut short but reported ok: %+v", s.ID, s)
		}
	}
}

func TestScopesCountCalls(t *testing.T) {
	w := world()
	w.AWS.Organization = nil
	w.AWS.Accounts = w.AWS.Accounts[:1]
	r, sim := collect(t, w, awscollector.Config{})
	total := 0
	for _, s := range r.scopes {
		if s.Calls == 0 {
			t.Errorf("scope %s counted no calls", s.ID)
		}
		total += s.Calls
	}
	// Discovery (GetCallerIdentity, DescribeRegions) is outside the scopes... except
	// DescribeRegions, which the ec2 scope of the account owns.
	served := 0
	for k, v := range sim.Calls() {
		if !strings.HasPrefix(k, "sts:") && k != "ec2:DescribeRegions" {
			served += v.Calls
		}
	}
	if total != served {
		t.Errorf("scopes counted %d calls, the simulator served %d", total, served)
	}
}
