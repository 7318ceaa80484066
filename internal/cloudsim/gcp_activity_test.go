package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
	policyanalyzer "google.golang.org/api/policyanalyzer/v1"
)

// activityWorld is gcpTestWorld at a fixed clock, with last authentications: the deployer
// account yesterday afternoon and its key k1 ten days ago, the compute account before the
// observation period, the rest never.
func activityWorld(now time.Time) *World {
	w := gcpTestWorld()
	w.Clock = now
	p := w.GCP.Projects[0]
	p.ActivitySince = time.Date(2026, 6, 1, 7, 0, 0, 0, time.UTC)
	at := func(t time.Time) *time.Time { return &t }
	p.ServiceAccounts[0].LastAuthenticated = at(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
	p.ServiceAccounts[1].LastAuthenticated = at(now.Add(-20 * time.Hour))
	p.ServiceAccounts[1].Keys[0].LastAuthenticated = at(now.AddDate(0, 0, -10))
	return w
}

type testActivity struct {
	LastAuthenticatedTime string `json:"lastAuthenticatedTime"`
	ServiceAccount        *struct {
		FullResourceName, ProjectNumber, ServiceAccountID string
	} `json:"serviceAccount"`
	ServiceAccountKey *struct {
		FullResourceName, ProjectNumber, ServiceAccountID string
	} `json:"serviceAccountKey"`
}

func decodeActivity(t *testing.T, a *policyanalyzer.GoogleCloudPolicyanalyzerV1Activity) testActivity {
	t.Helper()
	var out testActivity
	if err := json.Unmarshal(a.Activity, &out); err != nil {
		t.Fatalf("activity %s: %v", a.Activity, err)
	}
	return out
}

// TestPolicyAnalyzerActivities queries both authentication activity types with the
// official policyanalyzer/v1 client: Google's shape, the observation period, pages, the
// full-resource-name filter and the errors of an unknown project, type or filter.
func TestPolicyAnalyzerActivities(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	sim, srv := startGCP(t, activityWorld(now))
	svc, err := policyanalyzer.NewService(ctx, option.WithEndpoint(srv.URL+"/"), option.WithoutAuthentication())
	if err != nil {
		t.Fatal(err)
	}
	acts := svc.Projects.Locations.ActivityTypes.Activities
	const sa = "//iam.googleapis.com/projects/acme-prod/serviceAccounts/deployer@acme-prod.iam.gserviceaccount.com"

	resp, err := acts.Query("projects/acme-prod/locations/global/activityTypes/serviceAccountLastAuthentication").Context(ctx).Do()
	if err != nil || len(resp.Activities) != 1 || resp.NextPageToken != "" {
		t.Fatalf("service accounts: %+v %v", resp, err)
	}
	a := resp.Activities[0]
	got := decodeActivity(t, a)
	if a.FullResourceName != sa || a.ActivityType != "serviceAccountLastAuthentication" ||
		a.ObservationPeriod.StartTime != "2026-06-01T07:00:00Z" || a.ObservationPeriod.EndTime != "2026-12-06T07:00:00Z" ||
		got.LastAuthenticatedTime != "2026-12-05T07:00:00Z" || got.ServiceAccount == nil || got.ServiceAccountKey != nil ||
		got.ServiceAccount.FullResourceName != sa || got.ServiceAccount.ProjectNumber != "111111111111" || got.ServiceAccount.ServiceAccountID == "" {
		t.Errorf("service account activity: %+v %s", a, a.Activity)
	}
	var uid string
	sim.Do(func(w *World) { uid = w.GCP.Projects[0].ServiceAccounts[1].UniqueID })
	if got.ServiceAccount.ServiceAccountID != uid {
		t.Errorf("serviceAccountId %s, want the account's unique id %s", got.ServiceAccount.ServiceAccountID, uid)
	}

	keys := "projects/111111111111/locations/global/activityTypes/serviceAccountKeyLastAuthentication" // by number too
	resp, err = acts.Query(keys).Context(ctx).Do()
	if err != nil || len(resp.Activities) != 1 {
		t.Fatalf("keys: %+v %v", resp, err)
	}
	got = decodeActivity(t, resp.Activities[0])
	if resp.Activities[0].FullResourceName != sa+"/keys/k1" || got.ServiceAccountKey == nil || got.ServiceAccount != nil ||
		got.ServiceAccountKey.FullResourceName != sa+"/keys/k1" || got.LastAuthenticatedTime != "2026-11-26T07:00:00Z" {
		t.Errorf("key activity: %+v %s", resp.Activities[0], resp.Activities[0].Activity)
	}

	// Pages of one, collected by the client's own Pages.
	sim.Do(func(w *World) {
		t1 := now.AddDate(0, 0, -3)
		w.GCP.Projects[0].ServiceAccounts[2].LastAuthenticated = &t1
	})
	var names []string
	pages := 0
	err = acts.Query("projects/acme-prod/locations/global/activityTypes/serviceAccountLastAuthentication").PageSize(1).
		Pages(ctx, func(r *policyanalyzer.GoogleCloudPolicyanalyzerV1QueryActivityResponse) error {
			pages++
			for _, a := range r.Activities {
				names = append(names, a.FullResourceName)
			}
			return nil
		})
	if err != nil || pages != 2 || len(names) != 2 || names[0] != sa || names[1] != "//iam.googleapis.com/projects/acme-prod/serviceAccounts/ci@acme-prod.iam.gserviceaccount.com" {
		t.Errorf("pages: %d %v %v", pages, names, err)
	}

	for _, tc := range []struct {
		name, typ, filter string
		want              int
	}{
		{"account by snake_case name", "serviceAccountLastAuthentication", `activities.full_resource_name="` + sa + `"`, 1},
		{"account by camelCase name", "serviceAccountLastAuthentication", `activities.fullResourceName = "` + sa + `"`, 1},
		{"account never used", "serviceAccountLastAuthentication", `activities.full_resource_name="//iam.googleapis.com/projects/acme-prod/serviceAccounts/none@x"`, 0},
		{"key", "serviceAccountKeyLastAuthentication", `activities.full_resource_name="` + sa + `/keys/k1"`, 1},
		{"unused key", "serviceAccountKeyLastAuthentication", `activities.full_resource_name="` + sa + `/keys/k2"`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := acts.Query("projects/acme-prod/locations/global/activityTypes/" + tc.typ).Filter(tc.filter).Context(ctx).Do()
			if err != nil || len(resp.Activities) != tc.want {
				t.Fatalf("%+v %v", resp, err)
			}
		})
	}

	for _, tc := range []struct {
		name, parent, filter string
		code                 int
	}{
		{"unknown project", "projects/nope/locations/global/activityTypes/serviceAccountLastAuthentication", "", http.StatusForbidden},
		{"unknown type", "projects/acme-prod/locations/global/activityTypes/resourceAuthorization", "", http.StatusBadRequest},
		{"unsupported filter", "projects/acme-prod/locations/global/activityTypes/serviceAccountLastAuthentication", `activities.activity_type="x"`, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := acts.Query(tc.parent).Filter(tc.filter).Context(ctx).Do()
			var ge *googleapi.Error
			if !errors.As(err, &ge) || ge.Code != tc.code {
				t.Fatalf("got %v, want HTTP %d", err, tc.code)
			}
		})
	}
}

func TestRefreshDay(t *testing.T) {
	for in, want := range map[string]string{
		"2026-12-06T15:00:00Z": "2026-12-06T07:00:00Z",
		"2026-12-06T07:00:00Z": "2026-12-06T07:00:00Z",
		"2026-12-06T06:59:59Z": "2026-12-05T07:00:00Z",
	} {
		at, _ := time.Parse(time.RFC3339, in)
		if got := refreshDay(at).Format(time.RFC3339); got != want {
			t.Errorf("refreshDay(%s) = %s, want %s", in, got, want)
		}
	}
}
