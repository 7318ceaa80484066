package conformance_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/snapshot"
)

// Tapes (issue 30) on both backends: a scope read again replays its last read's
// requests; while the region's groups are unchanged the replay proves it, and once a
// group changed the read again reports what a plain read reports. The IAM scope's read
// again always reports what a plain read does, whether its replay proved it unchanged
// or not (a backend may stamp its answers anew).
func init() {
	cases = append(cases, kase{"a scope read again replays its tape", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
		ctx := context.Background()
		col := awscollector.New(awscollector.Config{Regions: []string{"us-east-1"}})
		if _, err := col.Scopes(ctx); err != nil {
			t.Fatal(err)
		}
		plain := func(scope string) []string {
			t.Helper()
			var sink collectors.MemorySink
			if err := col.CollectScope(ctx, scope, &sink); err != nil {
				t.Fatal(err)
			}
			return encoded(t, sink.Resources)
		}
		again := func(scope string, tape []byte) (collectors.Reread, []string) {
			t.Helper()
			var sink collectors.MemorySink
			r, err := col.CollectScopeAgain(ctx, scope, collectors.Again{Tape: tape}, &sink)
			if err != nil {
				t.Fatal(err)
			}
			return r, encoded(t, sink.Resources)
		}

		iamScope := "aws/" + conformance.Account + "/iam"
		first, _ := again(iamScope, nil)
		if len(first.Tape) == 0 {
			t.Fatalf("IAM: no tape (%s)", first.Why)
		}
		if r, got := again(iamScope, first.Tape); !r.Unchanged && !slices.Equal(got, plain(iamScope)) {
			t.Errorf("IAM read again (not unchanged: %s) reports other resources than a plain read", r.Why)
		}

		ec2Scope := "aws/" + conformance.Account + "/ec2/us-east-1"
		first, _ = again(ec2Scope, nil)
		if len(first.Tape) == 0 {
			t.Fatalf("EC2: no tape (%s)", first.Why)
		}
		if r, got := again(ec2Scope, first.Tape); !r.Unchanged || len(got) > 0 {
			t.Fatalf("EC2 unchanged: unchanged %v (%s), %d resources reported", r.Unchanged, r.Why, len(got))
		}
		if _, err := ec2.NewFromConfig(c.SDK()).AuthorizeSecurityGroupIngress(ctx, &ec2.AuthorizeSecurityGroupIngressInput{
			GroupId: aws.String(w.Group), IpPermissions: []ec2types.IpPermission{{IpProtocol: aws.String("tcp"),
				FromPort: aws.Int32(3389), ToPort: aws.Int32(3389), IpRanges: []ec2types.IpRange{{CidrIp: aws.String("0.0.0.0/0")}}}}}); err != nil {
			t.Fatal(err)
		}
		r, got := again(ec2Scope, first.Tape)
		if r.Unchanged {
			t.Fatal("EC2: a group changed, and the replay proved the scope unchanged")
		}
		if want := plain(ec2Scope); !slices.Equal(got, want) || !strings.Contains(strings.Join(got, "\n"), "3389") {
			t.Fatalf("EC2 changed: the read again reports\n%v\nwant (a plain read, RDP open)\n%v", got, want)
		}
	}})
}

// encoded is each resource as JSON, sorted.
func encoded(t *testing.T, rs []snapshot.Resource) []string {
	t.Helper()
	var out []string
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	slices.Sort(out)
	return out
}
