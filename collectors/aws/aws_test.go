package aws_test

import (
	"context"
	"encoding/json"
	"fmt"
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

var (
	t0       = time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	lastUsed = time.Date(2026, 11, 20, 8, 30, 0, 0, time.UTC)
)

const adminDoc = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
const trustEC2 = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`

func trustAccount(acct string) cloudsim.Doc {
	return cloudsim.Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + acct + `:root"},"Action":"sts:AssumeRole"}]}`)
}

// account builds a small but complete account: every IAM kind, two regions of security
// groups, an ACM certificate.
func account(id string) *cloudsim.Account {
	return &cloudsim.Account{
		ID: id, Name: "acct-" + id, Regions: []string{"us-east-1", "eu-west-1"},
		Root:           cloudsim.Root{MFA: false, AccessKeysActive: 1, PasswordLastUsed: &lastUsed, Created: t0},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true},
		Users: []*cloudsim.User{
			{Name: "alice", Created: t0, PasswordEnabled: true, PasswordLastUsed: &lastUsed, MFA: true, Groups: []string{"admins"},
				Tags: map[string]string{"team": "platform"}},
			{Name: "ci-bot", Path: "/automation/", Created: t0, AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"},
				AccessKeys: []*cloudsim.AccessKey{
					{ID: "AKIA" + id[:4] + "CIBOTKEY0001", Created: t0, LastUsed: &lastUsed, LastUsedService: "s3", LastUsedRegion: "eu-west-1"},
					{ID: "AKIA" + id[:4] + "CIBOTKEY0002", Status: "Inactive", Created: t0.Add(24 * time.Hour)},
				},
				InlinePolicies: []cloudsim.InlinePolicy{{Name: "all", Document: adminDoc}}},
		},
		Groups: []*cloudsim.Group{{Name: "admins", Created: t0, AttachedPolicies: []string{"arn:aws:iam::" + id + ":policy/ops"}}},
		Roles: []*cloudsim.Role{
			{Name: "OrganizationAccountAccessRole", Created: t0, AssumeRolePolicy: trustAccount("111111111111"),
				AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"}},
			{Name: "web", Created: t0, AssumeRolePolicy: trustEC2, LastUsed: &lastUsed, LastUsedRegion: "us-east-1", MaxSessionDuration: 7200},
		},
		Policies: []*cloudsim.Policy{
			{Name: "AdministratorAccess", AWSManaged: true, Document: adminDoc, Created: t0},
			{Name: "ops", Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}`, Created: t0},
		},
		SecurityGroups: []*cloudsim.SecurityGroup{
			{ID: "sg-0000000000000001", Name: "default", Region: "us-east-1", Description: "default group",
				Egress: []cloudsim.Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}},
			{ID: "sg-0000000000000002", Name: "ssh", Region: "eu-west-1", Description: "ssh", Tags: map[string]string{"env": "prod"},
				Ingress: []cloudsim.Rule{
					{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"},
					{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "10.0.0.0/8"},
					{Protocol: "tcp", FromPort: 443, ToPort: 443, SourceGroup: "sg-0000000000000001"},
				}},
		},
		Certificates: []*cloudsim.Certificate{
			{ID: "0f1e2d3c-0000-4000-8000-" + id, Region: "eu-west-1", Domain: "shop.example.com", SANs: []string{"shop.example.com"},
				RenewalEligibility: "ELIGIBLE", InUseBy: []string{"arn:aws:elasticloadbalancing:eu-west-1:" + id + ":loadbalancer/app/shop/1"},
				Cert: cloudsim.CertSpec{Subject: "CN=shop.example.com", Issuer: "CN=Amazon RSA 2048 M02,O=Amazon,C=US", DNSNames: []string{"shop.example.com"},
					NotBefore: t0, NotAfter: t0.AddDate(1, 0, 0)}},
		},
	}
}

func world() *cloudsim.World {
	return &cloudsim.World{AWS: cloudsim.AWS{
		Organization: &cloudsim.Organization{ID: "o-test000001", Management: "111111111111"},
		Accounts:     []*cloudsim.Account{account("111111111111"), account("222222222222"), account("333333333333")},
	}}
}

type result struct {
	byUID  map[string]snapshot.Resource
	scopes map[string]snapshot.Scope
	ids    []string
}

func collect(t *testing.T, w *cloudsim.World, cfg awscollector.Config) (result, *cloudsim.Sim) {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	cfg.Endpoint = url
	sdk := simtest.AWSConfig(url)
	base := &sdk
	if cfg.AWS != nil {
		base.APIOptions = cfg.AWS.APIOptions // middleware a test adds to every client
	}
	cfg.AWS = base
	if cfg.RateLimits == nil {
		cfg.RateLimits = map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0}
	}
	cfg.BaseBackoff, cfg.MaxBackoff = time.Millisecond, 20*time.Millisecond
	c := awscollector.New(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids, err := c.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	r := result{byUID: map[string]snapshot.Resource{}, scopes: map[string]snapshot.Scope{}, ids: ids}
	for _, res := range sink.Resources {
		// What the collector writes is what the snapshot reader accepts.
		if err := snapshot.Validate(res); err != nil {
			t.Errorf("collected resource is not valid: %v", err)
		}
		// AWS-managed policies have one ARN in every account that uses them.
		key := res.UID
		if strings.HasPrefix(key, "arn:aws:iam::aws:") {
			key = res.Account + "|" + key
		}
		if _, dup := r.byUID[key]; dup {
			t.Errorf("resource %s of %s reported twice", res.UID, res.Account)
		}
		r.byUID[key] = res
	}
	for _, s := range sink.Scopes {
		if _, dup := r.scopes[s.ID]; dup {
			t.Errorf("scope %s reported twice", s.ID)
		}
		r.scopes[s.ID] = s
	}
	return r, sim
}

func attr(t *testing.T, r snapshot.Resource, path string) any {
	t.Helper()
	var v any = r.Attributes
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: %s: not an object at %q", r.UID, path, k)
		}
		v = m[k]
	}
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

func TestCollectAccount(t *testing.T) {
	w := world()
	w.AWS.Organization = nil
	w.AWS.Accounts = w.AWS.Accounts[:1]
	r, _ := collect(t, w, awscollector.Config{})
	if !slices.Equal(r.ids, []string{"111111111111"}) {
		t.Errorf("accounts = %v", r.ids)
	}
	const a = "arn:aws:iam::111111111111:"
	tests := []struct {
		uid, path string
		want      any
	}{
		{a + "root", "mfa_active", false},
		{a + "root", "access_keys_active", 1.0},
		{a + "root", "password_last_used", "2026-11-20T08:30:00Z"},
		{a + "account-password-policy", "minimum_password_length", 8.0},
		{a + "account-password-policy", "require_numbers", true},
		{a + "user/alice", "mfa_active", true},
		{a + "user/alice", "password_enabled", true},
		{a + "user/alice", "groups", []any{"admins"}},
		{a + "user/automation/ci-bot", "password_enabled", false},
		{a + "user/automation/ci-bot", "attached_policies", []any{map[string]any{"arn": "arn:aws:iam::aws:policy/AdministratorAccess", "name": "AdministratorAccess"}}},
		{a + "user/automation/ci-bot", "inline_policies", []any{map[string]any{"name": "all", "document": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"}}}}}},
		{a + "user/automation/ci-bot/accesskey/AKIA1111CIBOTKEY0001", "last_used", "2026-11-20T08:30:00Z"},
		{a + "user/automation/ci-bot/accesskey/AKIA1111CIBOTKEY0001", "last_used_service", "s3"},
		{a + "user/automation/ci-bot/accesskey/AKIA1111CIBOTKEY0002", "status", "Inactive"},
		{a + "user/automation/ci-bot/accesskey/AKIA1111CIBOTKEY0002", "last_used", nil},
		{a + "group/admins", "members", []any{"alice"}},
		{a + "role/web", "last_used_region", "us-east-1"},
		{a + "role/web", "max_session_duration", 7200.0},
		{a + "role/web", "assume_role_policy.Statement", []any{map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}}},
		{"111111111111|arn:aws:iam::aws:policy/AdministratorAccess", "aws_managed", true},
		{"111111111111|arn:aws:iam::aws:policy/AdministratorAccess", "attached_to.users", []any{"ci-bot"}},
		{"111111111111|arn:aws:iam::aws:policy/AdministratorAccess", "attached_to.roles", []any{"OrganizationAccountAccessRole"}},
		{a + "policy/ops", "attached_to.groups", []any{"admins"}},
		{"arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002", "ingress", []any{
			map[string]any{"id": "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002#ingress/tcp/22-22/0.0.0.0/0", "direction": "ingress", "protocol": "tcp", "from_port": 22.0, "to_port": 22.0, "cidr": "0.0.0.0/0", "source_group": "", "description": "anywhere"},
			map[string]any{"id": "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002#ingress/tcp/22-22/10.0.0.0/8", "direction": "ingress", "protocol": "tcp", "from_port": 22.0, "to_port": 22.0, "cidr": "10.0.0.0/8", "source_group": "", "description": ""},
			map[string]any{"id": "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002#ingress/tcp/443-443/sg-0000000000000001", "direction": "ingress", "protocol": "tcp", "from_port": 443.0, "to_port": 443.0, "cidr": "", "source_group": "sg-0000000000000001", "description": ""},
		}},
		{"arn:aws:ec2:us-east-1:111111111111:security-group/sg-0000000000000001", "is_default", true},
		{"arn:aws:acm:eu-west-1:111111111111:certificate/0f1e2d3c-0000-4000-8000-111111111111", "status", "ISSUED"},
		{"arn:aws:acm:eu-west-1:111111111111:certificate/0f1e2d3c-0000-4000-8000-111111111111", "certificate.issuer", "CN=Amazon RSA 2048 M02,O=Amazon,C=US"},
		{"arn:aws:acm:eu-west-1:111111111111:certificate/0f1e2d3c-0000-4000-8000-111111111111", "certificate.not_after", "2025-01-10T09:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.uid[strings.LastIndexAny(tc.uid, ":/")+1:]+"/"+tc.path, func(t *testing.T) {
			res, ok := r.byUID[tc.uid]
			if !ok {
				t.Fatalf("no resource %s", tc.uid)
			}
			got := attr(t, res, tc.path)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%s = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
	if got := r.byUID["arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0000000000000002"].Tags["env"]; got != "prod" {
		t.Errorf("security group tag env = %q", got)
	}
	for _, id := range []string{"aws/111111111111/iam", "aws/111111111111/ec2/us-east-1", "aws/111111111111/ec2/eu-west-1", "aws/111111111111/acm/eu-west-1", "aws/111111111111/acm/us-east-1"} {
		if s, ok := r.scopes[id]; !ok || s.Status != snapshot.ScopeOK {
			t.Errorf("scope %s = %+v, want ok", id, s)
		}
	}
}
