package conformance_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/scan"
)

func init() {
	cases = append(cases, kase{"collection fails closed when denied", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
		ctx := context.Background()
		if c.Moto() {
			// moto enforces IAM after a number of unauthenticated actions: the two that
			// make a principal with no permission, then every call is judged against
			// the caller's policies.
			conformance.MotoEnforce(t, c.URL, 2)
		}
		im := iam.NewFromConfig(c.SDK())
		if _, err := im.CreateUser(ctx, &iam.CreateUserInput{UserName: aws.String("nobody")}); err != nil {
			t.Fatal(err)
		}
		key, err := im.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: aws.String("nobody")})
		if err != nil {
			t.Fatal(err)
		}
		if c.Sim != nil {
			// The simulator judges no IAM policy: the closest thing is every call but
			// STS's denied, as AWS denies them to a principal with no permission (who
			// may still ask who they are).
			c.Sim.Do(func(w *cloudsim.World) {
				for _, svc := range []string{"iam", "ec2", "acm", "organizations", "secretsmanager", "s3"} {
					w.Faults = append(w.Faults, cloudsim.Fault{Service: svc, AccessDenied: true})
				}
			})
		}
		standardChain(t, c, aws.ToString(key.AccessKey.AccessKeyId), aws.ToString(key.AccessKey.SecretAccessKey))

		h, rs := collectSnapshot(t)
		failed := map[string]bool{}
		for _, s := range h.Scopes {
			if s.Complete() {
				t.Errorf("scope %s read %s with no permission", s.ID, s.Status)
				continue
			}
			failed[s.Service] = true
			if s.Error == "" {
				t.Errorf("scope %s failed without saying why", s.ID)
			}
			// Not s.AccessDenied > 0 for every scope: moto answers ACM's denial (a JSON
			// service) in XML, which the SDK cannot decode; the scope still fails.
		}
		for _, svc := range []string{"iam", "ec2"} {
			if !failed[svc] {
				t.Errorf("no failed %s scope among %+v", svc, h.Scopes)
			}
		}
		for _, r := range rs {
			if strings.HasPrefix(r.Type, "aws.iam.") || strings.HasPrefix(r.Type, "aws.ec2.") {
				t.Errorf("a resource read with no permission: %s %s", r.Type, r.UID)
			}
		}

		// The scan says the account is unknown, not clean.
		res, err := scan.Run(ctx, scan.Request{Source: scan.Live(awsCollectors(t), collect.Options{Source: "conformance"}), Engine: engineOf(t)})
		if err != nil {
			t.Fatalf("scan: %v", err)
		}
		if len(res.IncompleteScopes) == 0 {
			t.Errorf("the scan of an unreadable account has no incomplete scope: %+v", res.Summary)
		}
	}})
}
