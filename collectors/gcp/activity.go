package gcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	policyanalyzer "google.golang.org/api/policyanalyzer/v1"

	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/snapshot"
)

// The Policy Analyzer's authentication activities (issue 29): when each service account
// and each key last authenticated to a Google API, within an observation period that the
// answers carry. Google answers only for those that authenticated in the period.
var activityTypes = []struct{ resource, activity string }{
	{"gcp.iam.service_account", "serviceAccountLastAuthentication"},
	{"gcp.iam.service_account_key", "serviceAccountKeyLastAuthentication"},
}

// lastAuthn is what one activity type says of a project: each authenticated resource's
// last authentication (RFC 3339) by its name within the project ("EMAIL" or
// "EMAIL/keys/ID"), and the observation period's start (nil when Google answered no
// activity, which carries the period, at all).
type lastAuthn struct {
	last  map[string]string
	since any
}

// addLastAuthentication sets attributes last_authenticated and last_authenticated_since
// on the service accounts and keys among res, from both activity types. A type whose
// query failed leaves its resources without them (nothing may be concluded) and its error
// is returned for the scope to report as partial.
func (c *Collector) addLastAuthentication(ctx context.Context, cl *clients, project string, res []snapshot.Resource) []error {
	var errs []error
	for _, at := range activityTypes {
		if err := c.setLastAuthn(ctx, cl, project, at.resource, at.activity, res); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// setLastAuthn queries one activity type of a project (every page, unfiltered: the
// observation period comes only with activities, so a resource without any is known
// never to have authenticated only from its project's other answers) and sets the
// attributes on the resources of type resType among res.
func (c *Collector) setLastAuthn(ctx context.Context, cl *clients, project, resType, activity string, res []snapshot.Resource) error {
	data, err := c.queryLastAuthn(ctx, cl, project, activity)
	if err != nil {
		return fmt.Errorf("Policy Analyzer %s activities: %w", activity, err)
	}
	for _, r := range res {
		if r.Type != resType {
			continue
		}
		var last any
		if t, ok := data.last[withinProject(r.UID)]; ok {
			last = t
		}
		r.Attributes["last_authenticated"] = last
		r.Attributes["last_authenticated_since"] = data.since
	}
	return nil
}

// readLastAuthn adds a re-read account's or key's last authentication (Config.Activity),
// so that Read reports what Collect did; a failed query leaves it out, as in Collect.
func (c *Collector) readLastAuthn(ctx context.Context, cl *clients, project string, r snapshot.Resource) {
	if !c.cfg.Activity {
		return
	}
	for _, at := range activityTypes {
		if at.resource == r.Type {
			if err := c.setLastAuthn(ctx, cl, project, at.resource, at.activity, []snapshot.Resource{r}); err != nil {
				c.log.Debug("gcp last authentication not readable", "uid", r.UID, "error", err)
			}
		}
	}
}

// withinProject is a service account's or key's name after ".../serviceAccounts/", the
// same whether Google names the project by id or number.
func withinProject(fullName string) string {
	_, rest, _ := strings.Cut(fullName, "/serviceAccounts/")
	return rest
}

// queryLastAuthn reads every page of one activity type of a project.
func (c *Collector) queryLastAuthn(ctx context.Context, cl *clients, project, activity string) (*lastAuthn, error) {
	parent := "projects/" + project + "/locations/global/activityTypes/" + activity
	acts, err := gcpapi.Pages(ctx, cl.api, "policyanalyzer.QueryActivity", func(ctx context.Context, token string, items *[]*policyanalyzer.GoogleCloudPolicyanalyzerV1Activity) (string, error) {
		resp, err := cl.api.PolicyAnalyzer.Projects.Locations.ActivityTypes.Activities.Query(parent).
			PageSize(int64(c.pageSize(1000))).PageToken(token).Context(ctx).Do()
		if err != nil {
			return "", err
		}
		*items = append(*items, resp.Activities...)
		return resp.NextPageToken, nil
	})
	if err != nil {
		return nil, err
	}
	out := &lastAuthn{last: map[string]string{}}
	var since time.Time
	for _, a := range acts {
		var body struct {
			LastAuthenticatedTime time.Time `json:"lastAuthenticatedTime"`
		}
		if err := json.Unmarshal(a.Activity, &body); err != nil || body.LastAuthenticatedTime.IsZero() {
			return nil, fmt.Errorf("activity of %s: no lastAuthenticatedTime in %s", a.FullResourceName, a.Activity)
		}
		name := withinProject(a.FullResourceName)
		at := rfc3339(body.LastAuthenticatedTime).(string)
		// RFC 3339 in UTC at one precision orders as text.
		if prev, ok := out.last[name]; !ok || at > prev {
			out.last[name] = at
		}
		if p := a.ObservationPeriod; p != nil {
			// Every activity of an answer carries the period; should they differ, the
			// latest start is the one all of them cover.
			if t, err := time.Parse(time.RFC3339, p.StartTime); err == nil && t.After(since) {
				since = t
			}
		}
	}
	out.since = rfc3339(since)
	return out, nil
}

// activityPermissions are the IAM permissions of this file's reads, one per activity type.
func activityPermissions() []string {
	return []string{"policyanalyzer.serviceAccountKeyLastAuthenticationActivities.query",
		"policyanalyzer.serviceAccountLastAuthenticationActivities.query"}
}
