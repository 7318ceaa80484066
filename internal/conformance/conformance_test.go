package conformance_test

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
)

// kase is one end-to-end case, run on every backend against a freshly seeded account.
type kase struct {
	name string
	run  func(t *testing.T, c *conformance.Cloud, w conformance.World)
}

var cases []kase

// TestConformance runs every case on the simulator and on moto: one moto_server per
// backend run, emptied between cases; a fresh simulator per case.
func TestConformance(t *testing.T) {
	for _, b := range conformance.Backends() {
		t.Run(b.Name, func(t *testing.T) {
			fresh := b.Start(t)
			for _, k := range cases {
				t.Run(k.name, func(t *testing.T) {
					c := fresh(t)
					standardChain(t, c, "AKIAWARDENCONFORMANCE", "secret")
					k.run(t, c, conformance.Seed(t, c))
				})
			}
		})
	}
}

// standardChain points the AWS SDK's standard chain at the cloud, as an operator does
// for `warden collect --aws` (AWS_ENDPOINT_URL and the credentials in the environment),
// with no profile, config file or instance metadata to find.
func standardChain(t *testing.T, c *conformance.Cloud, akid, secret string) {
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": c.URL, "AWS_ACCESS_KEY_ID": akid, "AWS_SECRET_ACCESS_KEY": secret, "AWS_SESSION_TOKEN": "",
		"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
		"AWS_MAX_ATTEMPTS": "2",
	} {
		t.Setenv(k, v)
	}
}

// collectors are warden's AWS collectors as `warden collect --aws --region us-east-1`
// builds them: the standard chain, the endpoint from AWS_ENDPOINT_URL.
func awsCollectors(t *testing.T) []collectors.Collector {
	t.Helper()
	cs, err := collect.Resolve(collect.Targets{AWS: &collect.AWS{Regions: []string{"us-east-1"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// collectSnapshot collects the account as `warden collect --aws` does and reads the
// snapshot back.
func collectSnapshot(t *testing.T) (snapshot.Header, []snapshot.Resource) {
	t.Helper()
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := collect.Run(ctx, &buf, awsCollectors(t), collect.Options{Source: "conformance"}); err != nil {
		t.Fatalf("collect: %v", err)
	}
	h, rs, err := snapshot.ReadAll(&buf, "collected")
	if err != nil {
		t.Fatalf("read the snapshot back: %v", err)
	}
	return h, rs
}

func resourceOf(rs []snapshot.Resource, typ, name string) (snapshot.Resource, bool) {
	for _, r := range rs {
		if r.Type == typ && r.Name == name {
			return r, true
		}
	}
	return snapshot.Resource{}, false
}

func init() {
	cases = append(cases,
		kase{"collect", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			h, rs := collectSnapshot(t)
			if !slices.Contains(h.Accounts, conformance.Account) {
				t.Errorf("accounts %v, want %s", h.Accounts, conformance.Account)
			}
			for _, s := range h.Scopes {
				if !s.Complete() {
					t.Errorf("scope %s: %s %s", s.ID, s.Status, s.Error)
				}
			}
			if len(h.Scopes) == 0 {
				t.Error("no scopes recorded")
			}
			for _, want := range []struct{ typ, name string }{
				{"aws.iam.user", conformance.UserAlice}, {"aws.iam.user", conformance.UserAdmin},
				{"aws.iam.policy", "everything"}, {"aws.ec2.security_group", "web"},
			} {
				if _, ok := resourceOf(rs, want.typ, want.name); !ok {
					var got []string
					for _, r := range rs {
						got = append(got, r.Type+" "+r.Name)
					}
					t.Errorf("no %s %q among %v", want.typ, want.name, got)
				}
			}
			if sg, ok := resourceOf(rs, "aws.ec2.security_group", "web"); ok && sg.UID != w.GroupARN {
				t.Errorf("security group uid %s, want %s", sg.UID, w.GroupARN)
			}
			// Its use is read from the region's network interfaces, on both backends alike:
			// nothing uses the new group, and no other group names it.
			if sg, ok := resourceOf(rs, "aws.ec2.security_group", "web"); ok {
				att, _ := sg.Attributes["attachments"].(map[string]any)
				if att["complete"] != true || att["count"] != float64(0) || sg.Attributes["attached"] != false {
					t.Errorf("security group web: attachments %v, attached %v; want read whole, used by nothing", att, sg.Attributes["attached"])
				}
				if refs, ok := sg.Attributes["referenced_by"].([]any); !ok || len(refs) != 0 {
					t.Errorf("security group web: referenced_by %v, want []", sg.Attributes["referenced_by"])
				}
			}
			if p, ok := resourceOf(rs, "aws.iam.policy", "everything"); ok && p.UID != w.PolicyARN {
				t.Errorf("policy uid %s, want %s", p.UID, w.PolicyARN)
			}
		}},
		kase{"scan", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			res, err := scan.Run(context.Background(), scan.Request{Source: scan.Live(awsCollectors(t), collect.Options{Source: "conformance"}),
				Engine: engineOf(t)})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			if len(res.EvalErrors) > 0 || len(res.IncompleteScopes) > 0 {
				t.Fatalf("scan incomplete: %v %v", res.EvalErrors, res.IncompleteScopes)
			}
			has := func(policy, resource string) bool {
				return slices.ContainsFunc(res.Findings, func(f findings.Finding) bool {
					return f.Policy == policy && (resource == "" || f.Resource == resource)
				})
			}
			for _, want := range []struct{ policy, resource, what string }{
				{"WARDEN-AWS-NET-001", w.GroupARN, "SSH open to the internet"},
				{"WARDEN-AWS-IAM-001", w.PolicyARN, "the managed policy allowing everything"},
				{"WARDEN-AWS-IAM-001", "arn:aws:iam::" + conformance.Account + ":user/" + conformance.UserAdmin, "the inline policy allowing everything"},
				{"WARDEN-AWS-IAM-013", "", "the weak password policy"},
			} {
				if !has(want.policy, want.resource) {
					var got []string
					for _, f := range res.Findings {
						got = append(got, f.Policy+" "+f.Resource)
					}
					t.Errorf("no finding %s on %s (%s) among %v", want.policy, want.resource, want.what, got)
				}
			}
		}},
		kase{"old access key", func(t *testing.T, c *conformance.Cloud, w conformance.World) {
			// moto dates a key when it is made and cannot backdate it (the simulator's
			// world file can). The closest thing, the same on both backends: evaluate the
			// fresh keys as of 120 days from now (warden scan --now), when they are old.
			res, err := scan.Run(context.Background(), scan.Request{Source: scan.Live(awsCollectors(t), collect.Options{Source: "conformance"}),
				Engine: engineOf(t), Now: time.Now().AddDate(0, 0, 120)})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			old := map[string]bool{}
			for _, f := range res.Findings {
				if f.Policy == "WARDEN-AWS-IAM-008" {
					// The finding is on the key: arn:…:user/NAME/accesskey/AKIA….
					old[strings.SplitN(f.Resource, "/accesskey/", 2)[0]] = true
				}
			}
			for _, u := range []string{conformance.UserAlice, conformance.UserAdmin} {
				if !old["arn:aws:iam::"+conformance.Account+":user/"+u] {
					t.Errorf("no WARDEN-AWS-IAM-008 (key older than 90 days) on %s; on %v", u, old)
				}
			}
			// Today the same keys are young.
			res, err = scan.Run(context.Background(), scan.Request{Source: scan.Live(awsCollectors(t), collect.Options{Source: "conformance"}), Engine: engineOf(t)})
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			for _, f := range res.Findings {
				if f.Policy == "WARDEN-AWS-IAM-008" {
					t.Errorf("a key made today reported old: %s", f.Resource)
				}
			}
		}},
	)
}
