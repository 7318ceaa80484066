package gcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
)

const (
	saPrefix   = "//iam.googleapis.com/projects/acme-prod/serviceAccounts/"
	deployerSA = saPrefix + "deployer@acme-prod.iam.gserviceaccount.com"
	computeSA  = saPrefix + "111111111111-compute@developer.gserviceaccount.com"
	oldSA      = saPrefix + "old@acme-prod.iam.gserviceaccount.com"
)

// activityWorld is world() with last authentications on acme-prod: the deployer account
// three days ago, its key b1 ten days ago, the rest never, over a period from since.
func activityWorld(now, since time.Time) *cloudsim.World {
	w := world()
	p := w.GCP.Projects[0]
	p.ActivitySince = since
	at := func(t time.Time) *time.Time { return &t }
	p.ServiceAccounts[1].LastAuthenticated = at(now.AddDate(0, 0, -3))
	p.ServiceAccounts[1].Keys[0].LastAuthenticated = at(now.AddDate(0, 0, -10))
	return w
}

// day is t as the Policy Analyzer reports it: the daily refresh at 07:00Z at or before t.
func day(t time.Time) string {
	return t.UTC().Add(-7 * time.Hour).Truncate(24 * time.Hour).Add(7 * time.Hour).Format(time.RFC3339)
}

// TestCollect_lastAuthentication: with Config.Activity every service account and key of
// a project carries last_authenticated (its time, or null when never in the observation
// period) and last_authenticated_since (the period's start), read over every page; without
// it, neither attribute and no Policy Analyzer call.
func TestCollect_lastAuthentication(t *testing.T) {
	now := time.Now().UTC()
	since := now.AddDate(0, -6, 0)
	got := collect(t, activityWorld(now, since), nil, gcp.Config{Activity: true, PageSize: 1})
	if sc := got.scopes["gcp/acme-prod/iam"]; sc.Status != "ok" {
		t.Fatalf("scope: %+v", sc)
	}
	for _, tc := range []struct {
		uid  string
		want any
	}{
		{deployerSA, day(now.AddDate(0, 0, -3))},
		{deployerSA + "/keys/b1", day(now.AddDate(0, 0, -10))},
		{deployerSA + "/keys/b2", nil},
		{computeSA, nil},
		{computeSA + "/keys/a1", nil},
		{oldSA, nil},
	} {
		r, ok := got.resources[tc.uid]
		if !ok {
			t.Errorf("%s not collected", tc.uid)
			continue
		}
		last, ok := r.Attributes["last_authenticated"]
		if !ok || last != tc.want {
			t.Errorf("%s: last_authenticated = %#v (present %v), want %#v", tc.uid, last, ok, tc.want)
		}
		if s := r.Attributes["last_authenticated_since"]; s != day(since) {
			t.Errorf("%s: last_authenticated_since = %#v, want %s", tc.uid, s, day(since))
		}
	}
	// Two activity types, each in pages of one: the account's and the key's answer each
	// take one page (the last has no token).
	if n := got.sim.Calls()["policyanalyzer:QueryActivity"]; n.Calls != 2 {
		t.Errorf("policyanalyzer:QueryActivity calls = %+v, want 2", n)
	}

	off := collect(t, activityWorld(now, since), nil, gcp.Config{})
	for uid, r := range off.resources {
		if _, ok := r.Attributes["last_authenticated"]; ok {
			t.Errorf("%s: last_authenticated without Config.Activity", uid)
		}
		if _, ok := r.Attributes["last_authenticated_since"]; ok {
			t.Errorf("%s: last_authenticated_since without Config.Activity", uid)
		}
	}
	for k := range off.sim.Calls() {
		if strings.HasPrefix(k, "policyanalyzer:") {
			t.Errorf("called %s without Config.Activity", k)
		}
	}
}

// TestCollect_lastAuthenticationPages: several activities of one type are read over
// every page.
func TestCollect_lastAuthenticationPages(t *testing.T) {
	now := time.Now().UTC()
	w := activityWorld(now, now.AddDate(0, -6, 0))
	for _, sa := range w.GCP.Projects[0].ServiceAccounts {
		at := now.AddDate(0, 0, -1)
		sa.LastAuthenticated = &at
	}
	got := collect(t, w, nil, gcp.Config{Activity: true, PageSize: 1})
	for _, uid := range []string{deployerSA, computeSA, oldSA} {
		if last := got.resources[uid].Attributes["last_authenticated"]; last != day(now.AddDate(0, 0, -1)) {
			t.Errorf("%s: last_authenticated = %#v", uid, last)
		}
	}
	if n := got.sim.Calls()["policyanalyzer:QueryActivity"]; n.Calls != 4 {
		t.Errorf("policyanalyzer:QueryActivity calls = %+v, want 4 (3 pages of accounts, 1 of keys)", n)
	}
}

// TestCollect_lastAuthenticationFailure: a refused query leaves its type's attributes
// absent (nothing may be concluded), the other type's in place, and the scope partial
// with its resources read.
func TestCollect_lastAuthenticationFailure(t *testing.T) {
	now := time.Now().UTC()
	got := collect(t, activityWorld(now, now.AddDate(0, -6, 0)),
		[]cloudsim.Fault{{Service: "policyanalyzer", Action: "QueryActivity", Account: "acme-prod", AccessDenied: true}},
		gcp.Config{Activity: true})
	sc := got.scopes["gcp/acme-prod/iam"]
	if sc.Status != "partial" || !strings.Contains(sc.Error, "policyanalyzer.QueryActivity") {
		t.Fatalf("scope = %+v, want partial on policyanalyzer.QueryActivity", sc)
	}
	for _, uid := range []string{deployerSA, deployerSA + "/keys/b1", oldSA} {
		r, ok := got.resources[uid]
		if !ok {
			t.Fatalf("the partial scope lost %s", uid)
		}
		for _, a := range []string{"last_authenticated", "last_authenticated_since"} {
			if v, ok := r.Attributes[a]; ok {
				t.Errorf("%s: %s = %#v after a failed query", uid, a, v)
			}
		}
	}
	// Another project's queries are unaffected.
	if sc := got.scopes["gcp/acme-dev/iam"]; sc.Status != "ok" {
		t.Errorf("acme-dev scope = %+v", sc)
	}
}

// TestRead_lastAuthentication: an account or key re-read alone keeps its last
// authentication, as Collect reported it.
func TestRead_lastAuthentication(t *testing.T) {
	now := time.Now().UTC()
	since := now.AddDate(0, -6, 0)
	got := collect(t, activityWorld(now, since), nil, gcp.Config{Activity: true})
	_, url := simtest.Start(t, activityWorld(now, since), cloudsim.Options{})
	c := gcp.New(gcp.Config{Endpoint: url, RateLimit: 1000, MaxAttempts: 2, BaseBackoff: time.Millisecond, Activity: true})
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, uid := range []string{deployerSA, deployerSA + "/keys/b1", oldSA} {
		r, err := c.Read(ctx, uid)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := jsonOf(t, r), jsonOf(t, got.resources[uid]); g != w {
			t.Errorf("Read differs from Collect:\nread    %s\ncollect %s", g, w)
		}
	}
}
