package usage_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/internal/usage/usagetest"
)

func usageOf(t *testing.T, entries ...string) map[string]any {
	t.Helper()
	return usagetest.Attr(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), entries...)
}

// Data the cloud cannot speak for counts as used: incomplete data, tracking younger than
// the window, no data, and a date that does not parse remove nothing.
func TestUnusedFrom_failsClosed(t *testing.T) {
	window := 90 * 24 * time.Hour
	incomplete := usageOf(t, "kms=")
	incomplete["complete"], incomplete["error"] = false, "iam:GetServiceLastAccessedDetails: throttled"
	young := usageOf(t, "kms=")
	young["tracked_since"] = "2026-10-01T00:00:00Z"
	odd := usageOf(t, "kms=yesterday")
	for name, u := range map[string]map[string]any{"incomplete": incomplete, "tracking younger than the window": young, "no data": nil, "a date that does not parse": odd} {
		got, err := usage.Unused(u, window)
		if !got.Empty() {
			t.Errorf("%s: unused %v %v", name, got.Services, got.Actions)
		}
		if (name == "incomplete" || name == "no data") && err == nil {
			t.Errorf("%s: no error to say why nothing can be concluded", name)
		}
	}
	u, err := usage.Unused(usageOf(t, "kms=", "s3=2026-11-30"), window)
	if err != nil || !u.Services["kms"] || u.Services["s3"] || !strings.Contains(u.Evidence["kms"], "never used since tracking began on 2025-10-27") {
		t.Errorf("kms never used, s3 used: %+v %v", u, err)
	}
}

// An action of a used service is unused on its own; an action of an unused service goes
// with its service; a recent use, and one inside the window, are used.
func TestUnused_servicesAndActions(t *testing.T) {
	u, err := usage.Unused(usageOf(t, "s3=2026-11-24", "s3:GetObject=2026-11-24", "s3:PutBucketPolicy=", "s3:DeleteBucket=2026-01-05",
		"lambda=2026-09-15", "kms="), 90*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !u.Services["kms"] || u.Services["lambda"] || u.Services["s3"] {
		t.Errorf("services %v, want kms only", u.Services)
	}
	if !u.Actions["s3:putbucketpolicy"] || !u.Actions["s3:deletebucket"] || u.Actions["s3:getobject"] || len(u.Actions) != 2 {
		t.Errorf("actions %v, want s3:putbucketpolicy and s3:deletebucket", u.Actions)
	}
	if got := u.Evidence["s3:deletebucket"]; got != "last used 2026-01-05, 330 days before the data's date" {
		t.Errorf("evidence %q", got)
	}
	if strings.Join(u.Used, ",") != "lambda,s3" || !u.AsOf.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("used %v as of %v", u.Used, u.AsOf)
	}
}

// Access Analyzer's findings list only what is unused: they speak for a window no longer
// than the analyzer's age, and never for the services used (AllGranted false).
func TestAnalyzerUsage_unusedOnly(t *testing.T) {
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	// kms never used, ec2 last used 200 days ago, s3 used last week but s3:PutObject not.
	u := usagetest.Analyzer(asOf, 90, "kms=", "ec2=2026-05-15", "s3=2026-11-24", "s3:PutObject=")
	tests := []struct {
		name           string
		window         int
		u              map[string]any
		services       []string
		actions        []string
		wantAllGranted bool
	}{
		{"window within the analyzer's age", 90, u, []string{"ec2", "kms"}, []string{"s3:putobject"}, false},
		{"shorter window", 30, u, []string{"ec2", "kms"}, []string{"s3:putobject"}, false},
		{"window longer than the analyzer's age", 180, u, nil, nil, false},
		{"Access Advisor data lists every grant", 90, usagetest.Attr(asOf, "kms=", "s3=2026-11-24"), []string{"kms"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := usage.Unused(tt.u, time.Duration(tt.window)*24*time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if got := sortedKeys(g.Services); strings.Join(got, ",") != strings.Join(tt.services, ",") {
				t.Errorf("services %v, want %v", got, tt.services)
			}
			if got := sortedKeys(g.Actions); strings.Join(got, ",") != strings.Join(tt.actions, ",") {
				t.Errorf("actions %v, want %v", got, tt.actions)
			}
			if g.AllGranted != tt.wantAllGranted {
				t.Errorf("AllGranted %v, want %v", g.AllGranted, tt.wantAllGranted)
			}
		})
	}
	g, _ := usage.Unused(u, 90*24*time.Hour)
	if !strings.Contains(g.Evidence["kms"], "no use in the 90 days IAM Access Analyzer looks back") {
		t.Errorf("kms evidence %q", g.Evidence["kms"])
	}
	bad := usagetest.Analyzer(asOf, 90, "kms=")
	delete(bad, "window_days")
	if g, err := usage.Unused(bad, 30*24*time.Hour); err == nil || !g.Empty() {
		t.Errorf("analyzer data without window_days: %+v %v", g, err)
	}
	bad["listed"], bad["window_days"] = "something", 90
	if g, err := usage.Unused(bad, 30*24*time.Hour); err == nil || !g.Empty() {
		t.Errorf("unknown listed: %+v %v", g, err)
	}
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
