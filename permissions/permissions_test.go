package permissions

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/golden"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
)

// registry is the built-in registry, for planning only: generating needs no cloud.
func registry(t testing.TB) *remediators.Registry {
	t.Helper()
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// Every document, byte for byte, against testdata/: a change to a declared permission
// shows up as a diff of the generated policies in review.
func TestDocuments_golden(t *testing.T) {
	docs, err := Documents(registry(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
		golden.Check(t, filepath.Join("testdata", d.Name), d.Body, "go test ./permissions -run TestDocuments_golden -update")
	}
	want := []string{"aws-scanner-policy.json", "aws-remediator-policy.json", "aws-member-role-stackset.yaml",
		"gcp-scanner-role.yaml", "gcp-remediator-role.yaml", "aws-exporter-policy.json", "gcp-exporter-role.yaml"}
	if !slices.Equal(names, want) {
		t.Errorf("documents %v, want %v", names, want)
	}
	again, err := Documents(registry(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		if !bytes.Equal(docs[i].Body, again[i].Body) {
			t.Errorf("%s differs between two runs", docs[i].Name)
		}
	}
}

// Every registered remediator declares its permissions, each shaped like an IAM action
// or a GCP permission, and none declares nothing.
func TestRegistry_everyRemediatorDeclaresPermissions(t *testing.T) {
	reg := registry(t)
	for _, name := range reg.Names() {
		r, _ := reg.Get(name)
		perms := r.Spec().Permissions
		if len(perms.AWS)+len(perms.GCP) == 0 {
			t.Errorf("%s declares no permission", name)
		}
		if err := (Grants{AWS: perms.AWS, GCP: perms.GCP}).validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		// A fix of one cloud asks nothing of the other.
		if cloud, _, _ := strings.Cut(name, "."); cloud == "gcp" && len(perms.AWS) > 0 || cloud == "aws" && len(perms.GCP) > 0 {
			t.Errorf("%s declares permissions of the other cloud: %+v", name, perms)
		}
	}
}

// The scanner documents only read: no action or permission whose verb writes.
func TestScanner_readsOnly(t *testing.T) {
	s := Scanner()
	for _, a := range slices.Concat(s.AWS, Org()) {
		_, op, _ := strings.Cut(a, ":")
		if !hasAnyPrefix(op, "Get", "List", "Describe", "Generate") && a != "sts:AssumeRole" {
			t.Errorf("scanner action %s is not a read", a)
		}
	}
	for _, p := range s.GCP {
		verb := p[strings.LastIndexByte(p, '.')+1:]
		// query: Policy Analyzer's activities (policyanalyzer.*Activities.query), a read.
		if !hasAnyPrefix(verb, "get", "list") && !(verb == "query" && strings.HasPrefix(p, "policyanalyzer.")) {
			t.Errorf("scanner permission %s is not a read", p)
		}
	}
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// A subset of remediators grants only theirs; an unknown name is refused with the
// registered ones, and a near miss is named.
func TestRemediator_subset(t *testing.T) {
	reg := registry(t)
	cases := []struct {
		name    string
		actions []string
		aws     []string
		gcp     []string
		err     string
	}{
		{name: "one AWS fix", actions: []string{"aws.iam.deactivate_access_key"},
			aws: []string{"iam:ListAccessKeys", "iam:UpdateAccessKey"}},
		{name: "one of each cloud", actions: []string{"aws.iam.delete_login_profile", "gcp.iam.disable_service_account_key"},
			aws: []string{"iam:DeleteLoginProfile", "iam:GetLoginProfile"},
			gcp: []string{"iam.serviceAccountKeys.disable", "iam.serviceAccountKeys.enable", "iam.serviceAccountKeys.get"}},
		{name: "unknown", actions: []string{"aws.iam.deactivate_key"}, err: `unknown remediator "aws.iam.deactivate_key"`},
		{name: "near miss", actions: []string{"aws.ec2.disable_firewall"}, err: `did you mean "gcp.compute.disable_firewall"?`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := Remediator(reg, Options{Actions: c.actions})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(g.AWS, c.aws) || !slices.Equal(g.GCP, c.gcp) {
				t.Errorf("grants %+v, want AWS %v GCP %v", g, c.aws, c.gcp)
			}
		})
	}
}

// AWS refuses a managed policy over 6,144 characters (whitespace excluded) and a role's
// inline policies over 10,240 together; the documents stay under both.
func TestPolicies_withinAWSLimits(t *testing.T) {
	g, err := Remediator(registry(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	size := func(p Policy) int {
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	for name, p := range map[string]Policy{"scanner": ScannerPolicy(Options{}), "remediator": RemediatorPolicy(g, Options{})} {
		if n := size(p); n > 6144 {
			t.Errorf("%s policy: %d characters, over the managed policy limit of 6144", name, n)
		}
	}
	if n := size(MemberPolicy()) + size(RemediatorPolicy(g, Options{})); n > 10240 {
		t.Errorf("member role inline policies: %d characters, over the limit of 10240", n)
	}
}

// The StackSet template is YAML CloudFormation reads: the member role trusts the
// principal parameter, carries the member policy, and the remediator policy under the
// Remediate condition; the scanner policy lets warden assume that role by name.
func TestStackSet_roleTrustsWardenAndNamesTheRole(t *testing.T) {
	g, err := Remediator(registry(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := StackSet(g, Options{OrgRole: "AuditRole"})
	if err != nil {
		t.Fatal(err)
	}
	var tpl struct {
		Parameters map[string]struct {
			Default string `yaml:"Default"`
		} `yaml:"Parameters"`
		Resources map[string]struct {
			Type       string `yaml:"Type"`
			Properties struct {
				AssumeRolePolicyDocument struct {
					Statement []struct {
						Principal map[string]map[string]string `yaml:"Principal"`
					} `yaml:"Statement"`
				} `yaml:"AssumeRolePolicyDocument"`
				Policies []map[string]any `yaml:"Policies"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatalf("template does not parse: %v\n%s", err, b)
	}
	if got := tpl.Parameters["RoleName"].Default; got != "AuditRole" {
		t.Errorf("RoleName default %q, want AuditRole", got)
	}
	role := tpl.Resources["WardenRole"]
	if role.Type != "AWS::IAM::Role" {
		t.Fatalf("WardenRole is %q", role.Type)
	}
	st := role.Properties.AssumeRolePolicyDocument.Statement
	if len(st) != 1 || st[0].Principal["AWS"]["Ref"] != "WardenPrincipalArn" {
		t.Errorf("trust policy %+v, want the WardenPrincipalArn parameter only", st)
	}
	if ps := role.Properties.Policies; len(ps) != 2 || ps[0]["PolicyName"] != "warden-scanner" || ps[1]["Fn::If"] == nil {
		t.Errorf("inline policies %v, want warden-scanner and the conditional remediator", ps)
	}
	last := ScannerPolicy(Options{OrgRole: "AuditRole"}).Statement
	if s := last[len(last)-1]; s.Resource != "arn:aws:iam::*:role/AuditRole" || !slices.Equal(s.Action, []string{"sts:AssumeRole"}) {
		t.Errorf("scanner policy's last statement %+v, want sts:AssumeRole on the role", s)
	}
}
