package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/snapshot"
)

const acmeWorld = "../../fixtures/acme/world.yaml"

// readable are the types Read supports.
var readable = []string{"aws.iam.user", "aws.iam.group", "aws.iam.role", "aws.iam.policy", "aws.iam.access_key",
	"aws.iam.password_policy", "aws.iam.server_certificate", "aws.ec2.security_group", "aws.acm.certificate",
	"aws.iam.root_user", "aws.iam.account"}

// acme starts the simulator over acme's world and returns a collector of the whole
// organisation against it.
func acme(t *testing.T, cfg awscollector.Config) (*awscollector.Collector, *cloudsim.Sim) {
	t.Helper()
	w, err := cloudsim.LoadWorld(acmeWorld)
	if err != nil {
		t.Fatal(err)
	}
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	cfg.Org = true
	cfg.Endpoint = url
	sdk := simtest.AWSConfig(url)
	cfg.AWS = &sdk
	cfg.RateLimits = map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0}
	cfg.BaseBackoff, cfg.MaxBackoff = time.Millisecond, 5*time.Millisecond
	return awscollector.New(cfg), sim
}

func jsonOf(t *testing.T, r snapshot.Resource) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRead_equalsCollect reads every resource of a supported type that Collect reported
// in acme's organisation, each alone: the answer is the resource Collect reported, to the
// attribute.
func TestRead_equalsCollect(t *testing.T) {
	c, sim := acme(t, awscollector.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	caller, err := c.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, want := range sink.Resources {
		if !slices.Contains(readable, want.Type) {
			continue
		}
		// AWS-managed policies have one ARN in every account; Read reads the caller's.
		if strings.HasPrefix(want.UID, "arn:aws:iam::aws:") && want.Account != caller[0] {
			continue
		}
		seen[want.Type]++
		sim.ResetCalls()
		got, err := c.Read(ctx, want.UID)
		if err != nil {
			t.Errorf("Read(%s): %v", want.UID, err)
			continue
		}
		if g, w := jsonOf(t, got), jsonOf(t, want); g != w {
			t.Errorf("Read(%s) differs from Collect:\nread    %s\ncollect %s", want.UID, g, w)
		}
		// One resource is read with its own calls, never the bulk reads of a scope; but
		// the root user's password and key use are told by the credential report alone.
		for op := range sim.Calls() {
			report := strings.Contains(op, "CredentialReport") && want.Type != "aws.iam.root_user"
			if strings.Contains(op, "GetAccountAuthorizationDetails") || report || strings.HasSuffix(op, ":ListCertificates") {
				t.Errorf("Read(%s) made the bulk call %s", want.UID, op)
			}
		}
	}
	for _, typ := range readable {
		if seen[typ] == 0 {
			t.Errorf("acme's world has no %s to read", typ)
		}
	}
	t.Logf("read %v", seen)
}

// TestRead_minimumCalls: one security group in use is DescribeSecurityGroups by id and
// its interfaces (TestRead_securityGroupUse: an unused one more); one access key
// its user's key list and its last use; a policy GetPolicy, its default version and its
// attachments.
func TestRead_minimumCalls(t *testing.T) {
	c, sim := acme(t, awscollector.Config{})
	ctx := context.Background()
	if _, err := c.Discover(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		uid   string
		calls map[string]int
	}{
		{"arn:aws:ec2:eu-west-1:222222222222:security-group/sg-2e4ef211b13fa7ac5", map[string]int{"ec2:DescribeNetworkInterfaces": 1, "ec2:DescribeSecurityGroups": 1}},
		{"arn:aws:iam::111111111111:user/bob.martins/accesskey/AKIANILIFJP2UQQDFR5V", map[string]int{"iam:ListAccessKeys": 1, "iam:GetAccessKeyLastUsed": 1}},
		{"arn:aws:iam::aws:policy/AdministratorAccess", map[string]int{"iam:GetPolicy": 1, "iam:GetPolicyVersion": 1, "iam:ListEntitiesForPolicy": 1}},
	}
	for _, tc := range tests {
		t.Run(tc.uid, func(t *testing.T) {
			sim.ResetCalls()
			if _, err := c.Read(ctx, tc.uid); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for op, st := range sim.Calls() {
				if !strings.HasPrefix(op, "sts:") {
					got[op] = st.Calls
				}
			}
			if g, w := jsonString(got), jsonString(tc.calls); g != w {
				t.Errorf("calls %s, want %s", g, w)
			}
		})
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRead_goneIsNotFound deletes one resource of each type from the world: Read says
// ErrNotFound, and only for that resource. An account without a password policy is no
// "not found": its policy resource says it does not exist.
func TestRead_goneIsNotFound(t *testing.T) {
	const main = "arn:aws:iam::111111111111:"
	tests := []struct {
		name, typ, uid string // the uid, or else the first of typ in the caller's account
		delete         func(a *cloudsim.Account, name string)
	}{
		{"user", "", main + "user/alice.nguyen", func(a *cloudsim.Account, name string) {
			a.Users = slices.DeleteFunc(a.Users, func(u *cloudsim.User) bool { return u.Name == name })
		}},
		{"access key", "", main + "user/bob.martins/accesskey/AKIANILIFJP2UQQDFR5V", func(a *cloudsim.Account, id string) {
			for _, u := range a.Users {
				u.AccessKeys = slices.DeleteFunc(u.AccessKeys, func(k *cloudsim.AccessKey) bool { return k.ID == id })
			}
		}},
		{"access key of a user gone", "", main + "user/bob.martins/accesskey/AKIANILIFJP2UQQDFR5V", func(a *cloudsim.Account, _ string) {
			a.Users = slices.DeleteFunc(a.Users, func(u *cloudsim.User) bool { return u.Name == "bob.martins" })
		}},
		{"group", "aws.iam.group", "", func(a *cloudsim.Account, name string) {
			a.Groups = slices.DeleteFunc(a.Groups, func(g *cloudsim.Group) bool { return g.Name == name })
		}},
		{"role", "aws.iam.role", "", func(a *cloudsim.Account, name string) {
			a.Roles = slices.DeleteFunc(a.Roles, func(r *cloudsim.Role) bool { return r.Name == name })
		}},
		{"policy", "aws.iam.policy", "", func(a *cloudsim.Account, name string) {
			a.Policies = slices.DeleteFunc(a.Policies, func(p *cloudsim.Policy) bool { return p.Name == name })
		}},
		{"server certificate", "aws.iam.server_certificate", "", func(a *cloudsim.Account, name string) {
			a.ServerCertificates = slices.DeleteFunc(a.ServerCertificates, func(c *cloudsim.ServerCertificate) bool { return c.Name == name })
		}},
		{"security group", "aws.ec2.security_group", "", func(a *cloudsim.Account, id string) {
			a.SecurityGroups = slices.DeleteFunc(a.SecurityGroups, func(g *cloudsim.SecurityGroup) bool { return g.ID == id })
		}},
		{"certificate", "aws.acm.certificate", "", func(a *cloudsim.Account, id string) {
			a.Certificates = slices.DeleteFunc(a.Certificates, func(c *cloudsim.Certificate) bool { return c.ID == id })
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, sim := acme(t, awscollector.Config{})
			ctx := context.Background()
			uid := tc.uid
			if uid == "" {
				uid = firstOf(t, c, tc.typ)
			}
			if _, err := c.Read(ctx, uid); err != nil {
				t.Fatalf("Read(%s) before the deletion: %v", uid, err)
			}
			acct := strings.Split(uid, ":")[4]
			sim.Do(func(w *cloudsim.World) {
				for _, a := range w.AWS.Accounts {
					if a.ID == acct {
						tc.delete(a, uid[strings.LastIndexByte(uid, '/')+1:])
					}
				}
			})
			_, err := c.Read(ctx, uid)
			if !errors.Is(err, collectors.ErrNotFound) {
				t.Errorf("Read(%s) after the deletion = %v, want ErrNotFound", uid, err)
			}
		})
	}
	t.Run("password policy", func(t *testing.T) {
		c, sim := acme(t, awscollector.Config{})
		sim.Do(func(w *cloudsim.World) { w.AWS.Accounts[0].PasswordPolicy = nil })
		got, err := c.Read(context.Background(), "arn:aws:iam::111111111111:account-password-policy")
		if err != nil || got.Attributes["exists"] != false {
			t.Errorf("Read(password policy) of an account without one = %v, %v; want the resource saying it does not exist", got.Attributes, err)
		}
	})
}

// firstOf is the uid of the first resource of typ that the collector reports in the
// caller's account.
func firstOf(t *testing.T, c *awscollector.Collector, typ string) string {
	t.Helper()
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.Resources {
		if r.Type == typ && r.Account == "111111111111" && !strings.Contains(r.UID, ":iam::aws:") {
			return r.UID
		}
	}
	t.Fatalf("no %s in the caller's account", typ)
	return ""
}

// TestRead_deniedOrThrottledIsNotNotFound: a read AWS refused or throttled to the end is an
// error, and never ErrNotFound, whatever the type.
func TestRead_deniedOrThrottledIsNotNotFound(t *testing.T) {
	uids := []string{
		"arn:aws:iam::111111111111:user/alice.nguyen",
		"arn:aws:iam::111111111111:user/bob.martins/accesskey/AKIANILIFJP2UQQDFR5V",
		"arn:aws:iam::aws:policy/AdministratorAccess",
		"arn:aws:iam::111111111111:account-password-policy",
		"arn:aws:ec2:eu-west-1:222222222222:security-group/sg-22cd5da917ca29761",
	}
	faults := map[string][]cloudsim.Fault{
		"denied":    {{Service: "iam", AccessDenied: true}, {Service: "ec2", AccessDenied: true}},
		"throttled": {{Service: "iam", ThrottleRate: 1}, {Service: "ec2", ThrottleRate: 1}},
		"down":      {{Service: "iam", ErrorRate: 1}, {Service: "ec2", ErrorRate: 1}},
	}
	for name, fs := range faults {
		t.Run(name, func(t *testing.T) {
			c, sim := acme(t, awscollector.Config{MaxAttempts: 2})
			ctx := context.Background()
			if _, err := c.Discover(ctx); err != nil {
				t.Fatal(err)
			}
			if err := sim.SetFaults(fs, nil); err != nil {
				t.Fatal(err)
			}
			for _, uid := range uids {
				_, err := c.Read(ctx, uid)
				if err == nil || errors.Is(err, collectors.ErrNotFound) {
					t.Errorf("Read(%s) = %v, want an error other than ErrNotFound", uid, err)
				}
			}
		})
	}
}

func TestRead_refusesForeignUIDs(t *testing.T) {
	c, _ := acme(t, awscollector.Config{})
	for _, uid := range []string{"//iam.googleapis.com/projects/p/serviceAccounts/x", "arn:aws:s3:::bucket", "arn:aws:iam::111111111111:saml-provider/okta", "tls://a:443"} {
		if _, err := c.Read(context.Background(), uid); !errors.Is(err, collectors.ErrUnsupported) {
			t.Errorf("Read(%s) = %v, want ErrUnsupported", uid, err)
		}
	}
}
