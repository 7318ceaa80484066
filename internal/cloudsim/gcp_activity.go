package cloudsim

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	policyanalyzer "google.golang.org/api/policyanalyzer/v1"
)

// The Policy Analyzer's activities (policyanalyzer.googleapis.com v1, REST): when each
// service account and service-account key of a project last authenticated to a Google
// API, over an observation period that ends at the last daily refresh.
const (
	saLastAuthn    = "serviceAccountLastAuthentication"
	saKeyLastAuthn = "serviceAccountKeyLastAuthentication"
	// activityObservationDays is how far back the simulator's observation period reaches
	// when a project does not set activity_since (the simulator's choice: Google does not
	// document the period's length, only that each answer carries it).
	activityObservationDays = 365
	// activityRefreshHour is the UTC hour of Google's daily refresh: the observation
	// period's bounds and the reported times are always at 07:00:00Z (midnight Pacific).
	activityRefreshHour = 7
)

// activityRoutes serves GET /v1/projects/P/locations/L/activityTypes/T/activities:query.
func (s *Sim) activityRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/projects/{project}/locations/{location}/activityTypes/{type}/{verb}", s.queryActivities)
}

// refreshDay is t truncated to the last daily refresh at or before it.
func refreshDay(t time.Time) time.Time {
	off := activityRefreshHour * time.Hour
	return t.UTC().Add(-off).Truncate(24 * time.Hour).Add(off)
}

// activityFilter parses the filters Google documents for authentication activities,
// activities.full_resource_name = "NAME" (or activities.fullResourceName): the one full
// resource name to answer for. An empty filter answers every resource.
func activityFilter(f string) (string, error) {
	f = strings.TrimSpace(f)
	if f == "" {
		return "", nil
	}
	key, value, ok := strings.Cut(f, "=")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || (key != "activities.full_resource_name" && key != "activities.fullResourceName") {
		return "", errf(kindInvalid, "badRequest", "Invalid filter %q: supported filters are activities.full_resource_name = [STRING] and activities.fullResourceName = [STRING].", f)
	}
	if uq, err := strconv.Unquote(value); err == nil {
		value = uq
	} else if len(value) >= 2 && value[0] == '\'' && value[len(value)-1] == '\'' {
		value = value[1 : len(value)-1]
	}
	if value == "" {
		return "", errf(kindInvalid, "badRequest", "Invalid filter %q: the full resource name is empty.", f)
	}
	return value, nil
}

// activityPeriod is the project's observation period at now.
func activityPeriod(p *Project, now time.Time) *policyanalyzer.GoogleCloudPolicyanalyzerV1ObservationPeriod {
	end := refreshDay(now)
	start := end.AddDate(0, 0, -activityObservationDays)
	if !p.ActivitySince.IsZero() {
		start = refreshDay(p.ActivitySince)
	}
	return &policyanalyzer.GoogleCloudPolicyanalyzerV1ObservationPeriod{
		StartTime: start.Format(time.RFC3339), EndTime: end.Format(time.RFC3339)}
}

// authnActivity is the activity struct of one authentication activity, in Google's shape.
type authnActivity struct {
	LastAuthenticatedTime string        `json:"lastAuthenticatedTime"`
	ServiceAccount        *authnSubject `json:"serviceAccount,omitempty"`
	ServiceAccountKey     *authnSubject `json:"serviceAccountKey,omitempty"`
}

type authnSubject struct {
	FullResourceName string `json:"fullResourceName"`
	ProjectNumber    string `json:"projectNumber"`
	ServiceAccountID string `json:"serviceAccountId"`
}

// projectActivities are a project's activities of one type, in the world's order: only
// accounts or keys that authenticated within the observation period have one, as Google
// reports nothing for those that did not.
func projectActivities(p *Project, typ, want string, now time.Time) []*policyanalyzer.GoogleCloudPolicyanalyzerV1Activity {
	period := activityPeriod(p, now)
	start, _ := time.Parse(time.RFC3339, period.StartTime)
	end, _ := time.Parse(time.RFC3339, period.EndTime)
	var out []*policyanalyzer.GoogleCloudPolicyanalyzerV1Activity
	add := func(name string, at *time.Time, sa *ServiceAccount) {
		if at == nil || (want != "" && name != want) {
			return
		}
		day := refreshDay(*at)
		if day.Before(start) {
			return
		}
		// The period ends at the last refresh: later use shows on the next day's data.
		if day.After(end) {
			day = end
		}
		subject := &authnSubject{FullResourceName: name, ProjectNumber: p.Number, ServiceAccountID: sa.UniqueID}
		a := authnActivity{LastAuthenticatedTime: day.Format(time.RFC3339)}
		if typ == saLastAuthn {
			a.ServiceAccount = subject
		} else {
			a.ServiceAccountKey = subject
		}
		raw, _ := json.Marshal(a)
		out = append(out, &policyanalyzer.GoogleCloudPolicyanalyzerV1Activity{
			Activity: raw, ActivityType: typ, FullResourceName: name, ObservationPeriod: period})
	}
	for _, sa := range p.ServiceAccounts {
		name := "//iam.googleapis.com/projects/" + p.ID + "/serviceAccounts/" + sa.Email
		if typ == saLastAuthn {
			add(name, sa.LastAuthenticated, sa)
			continue
		}
		for _, k := range sa.Keys {
			add(name+"/keys/"+k.ID, k.LastAuthenticated, sa)
		}
	}
	return out
}

// queryActivities serves activities:query for the two authentication activity types.
// An unknown project is PermissionDenied on the type's permission, as Google answers for a
// project the caller cannot see; an unknown type is INVALID_ARGUMENT.
func (s *Sim) queryActivities(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("verb") != "activities:query" {
		writeGCPError(w, errf(kindNotFound, "notFound", "The requested URL %s was not found on this server.", r.URL.Path))
		return
	}
	key, typ := r.PathValue("project"), r.PathValue("type")
	q := r.URL.Query()
	s.serveREST(w, r, "policyanalyzer", "QueryActivity", s.projectKey(key), func(c *call) (any, error) {
		var perm string
		switch typ {
		case saLastAuthn:
			perm = "policyanalyzer.serviceAccountLastAuthenticationActivities.query"
		case saKeyLastAuthn:
			perm = "policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query"
		default:
			return nil, errf(kindInvalid, "badRequest", "Activity type %q is not supported: use %s or %s.", typ, saLastAuthn, saKeyLastAuthn)
		}
		p := s.gcpProject(key)
		if p == nil {
			return nil, errf(kindDenied, "forbidden", "Permission '%s' denied on resource '//cloudresourcemanager.googleapis.com/projects/%s' (or it may not exist).", perm, key)
		}
		want, err := activityFilter(q.Get("filter"))
		if err != nil {
			return nil, err
		}
		size := 0
		if v := q.Get("pageSize"); v != "" {
			if size, err = strconv.Atoi(v); err != nil {
				return nil, errf(kindInvalid, "badRequest", "Invalid pageSize %q.", v)
			}
		}
		// Non-positive sizes are ignored; 1000 is both the default and the limit.
		all := projectActivities(p, typ, want, s.now())
		start, end, next, err := pageBounds(q.Get("pageToken"), max(size, 0), 1000, 1000, len(all))
		if err != nil {
			return nil, err
		}
		return &policyanalyzer.GoogleCloudPolicyanalyzerV1QueryActivityResponse{Activities: all[start:end], NextPageToken: next}, nil
	})
}
