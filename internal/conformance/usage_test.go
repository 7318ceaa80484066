package conformance_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/snapshot"
)

// Usage (IAM Access Advisor, issue 29) on both backends. The simulator serves it: every
// user, group and role gets complete usage. moto 5.2.1 does not (its
// GenerateServiceLastAccessedDetails answers 500): there every principal's usage must
// say it is incomplete and why, never be missing or empty, so that no policy can read
// "unused" into it; the scope itself stays read in full.
func init() {
	cases = append(cases, kase{"usage fails closed where it is not served", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
		cs, err := collect.Resolve(collect.Targets{AWS: &collect.AWS{Regions: []string{"us-east-1"},
			Usage: awscollector.UsageConfig{Enabled: true, PollInterval: time.Millisecond}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if _, err := collect.Run(ctx, &buf, cs, collect.Options{Source: "conformance"}); err != nil {
			t.Fatalf("collect: %v", err)
		}
		h, rs, err := snapshot.ReadAll(&buf, "collected")
		if err != nil {
			t.Fatalf("read the snapshot back: %v", err)
		}
		for _, s := range h.Scopes {
			if !s.Complete() {
				t.Errorf("scope %s: %s %s", s.ID, s.Status, s.Error)
			}
		}
		principals := 0
		for _, r := range rs {
			if r.Type != "aws.iam.user" && r.Type != "aws.iam.role" && r.Type != "aws.iam.group" {
				continue
			}
			principals++
			u, _ := r.Attributes["usage"].(map[string]any)
			switch {
			case u == nil:
				t.Errorf("%s: no usage attribute", r.UID)
			case c.Moto():
				if u["complete"] != false || !strings.Contains(u["error"].(string), "GenerateServiceLastAccessedDetails") || u["services"] != nil {
					t.Errorf("%s on moto: usage %v, want incomplete with the reason", r.UID, u)
				}
			default:
				if u["complete"] != true {
					t.Errorf("%s on the simulator: usage %v, want complete", r.UID, u)
				}
			}
		}
		if principals == 0 {
			t.Error("no user, group or role collected")
		}
	}})
}
