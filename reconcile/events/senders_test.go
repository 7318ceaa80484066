package events_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/warden-sec/warden/reconcile/events"
)

// matches applies an EventBridge event pattern of the kinds EventPatterns writes
// (string lists, nested objects, {"exists": false}) to an event, as EventBridge does.
func matches(pattern, event map[string]any) bool {
	for k, want := range pattern {
		got, present := event[k]
		switch w := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !matches(w, sub) {
				return false
			}
		case []any:
			ok := false
			for _, alt := range w {
				switch a := alt.(type) {
				case string:
					ok = ok || got == a
				case map[string]any:
					if exists, isExists := a["exists"].(bool); isExists {
						ok = ok || present == exists
					}
				}
			}
			if !ok {
				return false
			}
		}
	}
	return true
}

func jsonMap(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestEventPatterns: the rules send every AWS sample Parse maps, and none it answers
// ErrUnknown for.
func TestEventPatterns(t *testing.T) {
	var patterns []map[string]any
	for _, p := range events.EventPatterns() {
		patterns = append(patterns, jsonMap(t, []byte(p)))
	}
	if len(patterns) != 2 {
		t.Fatalf("%d patterns, want the CloudTrail calls' and ACM's", len(patterns))
	}
	sent := func(e map[string]any) bool {
		return slices.ContainsFunc(patterns, func(p map[string]any) bool { return matches(p, e) })
	}
	names := patterns[0]["detail"].(map[string]any)["eventName"].([]any)
	for _, call := range events.AWSCalls() {
		_, name, _ := strings.Cut(call, ":")
		if !slices.Contains(names, any(name)) {
			t.Errorf("the pattern lacks %s", call)
		}
	}
	for _, g := range awsGolden {
		if e := jsonMap(t, read(t, filepath.Join("testdata/aws", g.file))); !sent(e) {
			t.Errorf("%s is mapped but the rules would not send it", g.file)
		}
	}
	unknown, err := filepath.Glob("testdata/unknown/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range unknown {
		e := jsonMap(t, read(t, f))
		if _, isEvent := e["detail-type"]; !isEvent {
			continue
		}
		// CreateTags on an instance is sent (a rule cannot see which resources a call
		// tags); Parse counts it as unknown.
		if sent(e) && !strings.HasSuffix(f, "ec2-create-tags-instance.json") {
			t.Errorf("%s is not mapped but the rules would send it", f)
		}
	}
}

// filterClause is one service's clause of LogFilter.
var filterClause = regexp.MustCompile(`\(protoPayload\.serviceName="([^"]+)" AND protoPayload\.methodName=~"([^"]+)"\)`)

// TestLogFilter: the sink filter passes every GCP sample Parse maps, and none it
// answers ErrUnknown for; it is written without backslash escapes.
func TestLogFilter(t *testing.T) {
	f := events.LogFilter()
	if strings.Contains(f, `\`) {
		t.Errorf("the filter has a backslash: %s", f)
	}
	if !strings.HasPrefix(f, `logName:"cloudaudit.googleapis.com%2Factivity" AND NOT protoPayload.status.code:* AND (`) {
		t.Errorf("the filter does not keep to successful Admin Activity: %s", f)
	}
	clauses := filterClause.FindAllStringSubmatch(f, -1)
	if len(clauses) != 3 {
		t.Fatalf("%d clauses in %s, want one a service", len(clauses), f)
	}
	passes := func(e map[string]any) bool {
		pp, _ := e["protoPayload"].(map[string]any)
		if pp == nil || !strings.Contains(e["logName"].(string), "cloudaudit.googleapis.com%2Factivity") {
			return false
		}
		if st, _ := pp["status"].(map[string]any); st["code"] != nil {
			return false
		}
		for _, c := range clauses {
			if pp["serviceName"] == c[1] && regexp.MustCompile(c[2]).MatchString(pp["methodName"].(string)) {
				return true
			}
		}
		return false
	}
	for _, g := range gcpGolden {
		if !passes(jsonMap(t, read(t, filepath.Join("testdata/gcp", g.file+".logentry.json")))) {
			t.Errorf("%s is mapped but the filter would not pass it", g.file)
		}
	}
	unknown, err := filepath.Glob("testdata/unknown/gcp-*.logentry.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range unknown {
		if passes(jsonMap(t, read(t, u))) {
			t.Errorf("%s is not mapped but the filter would pass it", u)
		}
	}
	// Every method of the table is in its service's clause.
	for _, event := range events.GCPCalls() {
		found := false
		for _, c := range clauses {
			re := regexp.MustCompile(c[2])
			for _, logged := range []string{event, "v1." + event, strings.TrimPrefix(event, "cloudresourcemanager.")} {
				found = found || re.MatchString(logged)
			}
		}
		if !found {
			t.Errorf("no clause passes %s", event)
		}
	}
}
