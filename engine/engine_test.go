package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/synth"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

const sshPolicy = `# METADATA
# title: SSH open
# description: test policy
# custom:
#   id: TEST-NET-001
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {cis-aws-3.0: ["5.2"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium}
package test.ssh

deny contains {"msg": sprintf("%s opens 22", [input.resource.name]), "key": rule.id, "target": rule.id, "cidr": rule.cidr} if {
	some rule in input.resource.attributes.ingress
	rule.cidr == "0.0.0.0/0"
	rule.from_port <= 22
	rule.to_port >= 22
}
`

func policyFS(files map[string]string) engine.Source {
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	return engine.Source{FS: fsys, Prefix: "testpolicies"}
}

func sg(uid string, ports ...int) snapshot.Resource {
	var ingress []any
	for _, p := range ports {
		ingress = append(ingress, map[string]any{"id": uid + "#ingress/tcp/" + strconv.Itoa(p), "protocol": "tcp", "cidr": "0.0.0.0/0", "from_port": p, "to_port": p})
	}
	return snapshot.Resource{UID: uid, Type: "aws.ec2.security_group", Name: uid, Account: "111", Region: "eu-west-1",
		Attributes: map[string]any{"ingress": ingress}}
}

func TestEvaluate_findingsCarryMetadataAndStableFingerprints(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy})}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	res, err := e.Evaluate(ctx, snapshot.Header{}, now, []snapshot.Resource{sg("sg-1", 22, 80), sg("sg-2", 80)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Fatalf("got %d findings, want 1: %+v", len(res.Findings), res.Findings)
	}
	f := res.Findings[0]
	want := findings.Finding{Policy: "TEST-NET-001", Title: "SSH open", Severity: findings.High, Resource: "sg-1",
		ResourceType: "aws.ec2.security_group", Account: "111", Region: "eu-west-1", Scope: "aws/111/ec2/eu-west-1",
		Message: "sg-1 opens 22", Key: "sg-1#ingress/tcp/22", Target: "sg-1#ingress/tcp/22",
		Remediation: findings.Remediation{Action: "aws.ec2.revoke_ingress", Risk: findings.RiskMedium},
		Frameworks:  map[string][]string{"cis-aws-3.0": {"5.2"}}, Details: map[string]any{"cidr": "0.0.0.0/0"},
		Status: findings.StatusOpen, Fingerprint: findings.Fingerprint("TEST-NET-001", "111", "sg-1", "sg-1#ingress/tcp/22")}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("finding =\n%+v\nwant\n%+v", f, want)
	}
	// The same cause gives the same fingerprint whatever else changes.
	renamed := sg("sg-1", 22)
	renamed.Name = "other-name"
	res2, _ := e.Evaluate(ctx, snapshot.Header{}, now, []snapshot.Resource{renamed})
	if res2.Findings[0].Fingerprint != f.Fingerprint {
		t.Errorf("fingerprint changed with the message: %s vs %s", res2.Findings[0].Fingerprint, f.Fingerprint)
	}
}

func TestNew_reportsBrokenPolicies(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"syntax error", map[string]string{"bad.rego": "package x\n\ndeny contains msg if {\n\tmsg := \n}\n"}, "testpolicies/bad.rego:5:1: unexpected } token"},
		{"compile error", map[string]string{"bad.rego": strings.Replace(sshPolicy, "rule.cidr ==", "undefined_fn(rule.cidr) ==", 1)}, "testpolicies/bad.rego:14:2: undefined function undefined_fn"},
		{"no metadata", map[string]string{"p.rego": "package x\n\ndeny contains \"x\" if input.resource\n"}, "testpolicies/p.rego:1:1: METADATA"},
		{"unknown type", map[string]string{"p.rego": strings.Replace(sshPolicy, "aws.ec2.security_group", "aws.ec2.securitygroup", 1)}, `unknown resource type "aws.ec2.securitygroup" (did you mean "aws.ec2.security_group"?)`},
		{"bad severity", map[string]string{"p.rego": strings.Replace(sshPolicy, "severity: high", "severity: urgent", 1)}, `custom.severity: unknown severity "urgent"`},
		{"unknown framework", map[string]string{"p.rego": strings.Replace(sshPolicy, "cis-aws-3.0", "cis-aws-3", 1)}, `unknown framework "cis-aws-3" (did you mean "cis-aws-3.0"?)`},
		{"duplicate id", map[string]string{"a.rego": sshPolicy, "b.rego": strings.Replace(sshPolicy, "package test.ssh", "package test.ssh2", 1)}, "policy id TEST-NET-001 is already used by testpolicies/a.rego"},
		{"bad risk", map[string]string{"p.rego": strings.Replace(sshPolicy, "risk: medium", "risk: spicy", 1)}, `custom.remediation.risk: "spicy" is not one of`},
		{"prowler not a list", map[string]string{"p.rego": strings.Replace(sshPolicy, "#   remediation:", "#   prowler: {a: b}\n#   remediation:", 1)}, `custom.prowler: must be a list of Prowler check ids`},
		{"prowler id misspelt", map[string]string{"p.rego": strings.Replace(sshPolicy, "#   remediation:", "#   prowler: [ec2-securitygroup-22]\n#   remediation:", 1)}, `custom.prowler: "ec2-securitygroup-22" is not a Prowler check id`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{policyFS(tt.files)}})
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q\nwant it to contain %q", err, tt.want)
			}
			var pe *engine.PolicyError
			if !errors.As(err, &pe) {
				t.Errorf("error is %T, want it to wrap *engine.PolicyError", err)
			}
		})
	}
}

func TestEvaluate_runtimeErrorIsCountedNotFatal(t *testing.T) {
	conflict := `# METADATA
# title: Conflict
# custom:
#   id: TEST-BROKEN-001
#   severity: low
#   resource_types: [aws.ec2.security_group]
#   remediation: {action: notify, risk: none}
package test.broken

x := 1 if input.resource.name
x := 2 if input.resource.name

deny contains "never" if x == 3
`
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy, "broken.rego": conflict})}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), []snapshot.Resource{sg("sg-1", 22)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Policy != "TEST-NET-001" {
		t.Errorf("findings = %+v, want the healthy policy's finding", res.Findings)
	}
	if len(res.EvalErrors) != 1 || res.EvalErrors[0].Policy != "TEST-BROKEN-001" || res.EvalErrors[0].Resource != "sg-1" {
		t.Errorf("eval errors = %+v, want one for TEST-BROKEN-001 on sg-1", res.EvalErrors)
	}
}

// A scan must give the same result whatever the number of workers, and the same as
// evaluating the resources one by one.
func TestScan_deterministicAndEqualToEvaluate(t *testing.T) {
	var buf bytes.Buffer
	if err := synth.Write(&buf, synth.Options{Resources: 1500, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var results []*engine.Result
	for _, workers := range []int{1, 3} {
		e := builtin(t, workers)
		res, err := e.Scan(ctx, snapshot.NewReader(bytes.NewReader(buf.Bytes()), "synth"), engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if !reflect.DeepEqual(results[0].Findings, results[1].Findings) {
		t.Fatal("findings differ between 1 and 3 workers")
	}
	if n := len(results[0].Findings); n < 100 {
		t.Fatalf("only %d findings on 1500 synthetic resources; the generator or the pack is broken", n)
	}
	h, rs, err := snapshot.ReadAll(bytes.NewReader(buf.Bytes()), "synth")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := builtin(t, 1).Evaluate(ctx, h, h.CollectedAt, rs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fingerprints(sub.Findings), fingerprints(results[0].Findings)) {
		t.Error("Evaluate and Scan disagree on the same resources")
	}
}

func fingerprints(fs []findings.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Fingerprint + " " + f.Message
	}
	return out
}

func TestScan_refusesDuplicateAndUndeclaredScopes(t *testing.T) {
	e := builtin(t, 2)
	tests := []struct{ name, in, want string }{
		{"duplicate uid", `{"version":1,"resources":[{"uid":"a","type":"aws.iam.user","account":"1"},{"uid":"a","type":"aws.iam.user","account":"1"}]}`, "resources[1].uid: duplicate resource"},
		{"duplicate uid, located", "{\"version\":1,\"resources\":[\n{\"uid\":\"a\",\"type\":\"aws.iam.user\",\"account\":\"1\"},\n{\"uid\":\"b\",\"type\":\"aws.iam.user\",\"account\":\"1\"},\n{\"uid\":\"a\",\"type\":\"aws.iam.user\",\"account\":\"1\"}]}",
			"line 4: resources[2].uid: duplicate resource: same account and uid as resources[0] (line 2)"},
		{"undeclared scope", `{"version":1,"scopes":[{"id":"aws/1/iam","status":"ok"}],"resources":[{"uid":"a","type":"aws.iam.user","account":"2","region":"global"}]}`, `resources[0].scope: scope "aws/2/iam" is not declared`},
		{"bad resource", "{\"version\":1,\"resources\":[\n{\"uid\":\"a\",\"type\":\"nope\"}]}", "line 2: resources[0].type: unknown resource type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.Scan(context.Background(), snapshot.NewReader(strings.NewReader(tt.in), "s.json"), engine.Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// A snapshot refused before its first resource (empty, not JSON, another version) is
// reported as that alone: no warning about the collected_at it could not have.
func TestScan_refusedSnapshotWarnsNothingElse(t *testing.T) {
	for _, in := range []string{"", "garbage", `{"version": 2, "resources": []}`} {
		var logs strings.Builder
		e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{engine.Builtin()},
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.Scan(context.Background(), snapshot.NewReader(strings.NewReader(in), "s.json"), engine.Options{})
		if err == nil {
			t.Fatalf("%q: no error", in)
		}
		if logs.Len() > 0 {
			t.Errorf("%q: refused with %v, and logged besides:\n%s", in, err, logs.String())
		}
	}
}

// Every catalog policy fires on the bundled example organisation.
func TestScan_acmeFiresEveryPolicy(t *testing.T) {
	f, err := os.Open("../fixtures/acme/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e := builtin(t, 0)
	res, err := e.Scan(context.Background(), snapshot.NewReader(f, "acme"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fired := map[string]int{}
	for _, f := range res.Findings {
		fired[f.Policy]++
	}
	for _, p := range e.Policies() {
		if fired[p.ID] == 0 {
			t.Errorf("%s (%s) has no finding on fixtures/acme", p.ID, p.Title)
		}
	}
	if len(res.EvalErrors) > 0 {
		t.Errorf("eval errors: %+v", res.EvalErrors)
	}
}

// Settings reach policies as data.warden.config and override the defaults in the Rego.
func TestNew_settingsOverridePolicyDefaults(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	key := snapshot.Resource{UID: "arn:aws:iam::1:user/ci/accesskey/AKIA1", Type: "aws.iam.access_key", Account: "1", Region: "global",
		Attributes: map[string]any{"access_key_id": "AKIA1", "user_name": "ci", "status": "Active",
			"created": "2026-09-15T00:00:00Z", "last_used": "2026-11-29T00:00:00Z"}}
	for _, tc := range []struct {
		settings map[string]any
		want     int
	}{
		{nil, 0}, // 76 days old: within the default 90
		{map[string]any{"access_key_max_age_days": 60}, 1},
	} {
		e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Settings: tc.settings})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Evaluate(ctx, snapshot.Header{}, now, []snapshot.Resource{key})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Findings) != tc.want {
			t.Errorf("settings %v: %d findings, want %d: %+v", tc.settings, len(res.Findings), tc.want, res.Findings)
		}
	}
}

// Accounts the snapshot covers are known: a role trusting another account of the same
// snapshot is not an unknown-account trust.
func TestScan_snapshotAccountsAreKnown(t *testing.T) {
	snap := `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "accounts": ["111111111111", "222222222222"], "resources": [
{"uid": "arn:aws:iam::111111111111:role/deploy", "type": "aws.iam.role", "name": "deploy", "account": "111111111111", "region": "global",
 "attributes": {"created": "2026-11-01T00:00:00Z", "last_used": "2026-11-29T00:00:00Z", "attached_policies": [], "inline_policies": [],
  "assume_role_policy": {"Version": "2012-10-17", "Statement": [
   {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::222222222222:root"}, "Action": "sts:AssumeRole"},
   {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::999999999999:root"}, "Action": "sts:AssumeRole"}]}}}]}`
	res, err := builtin(t, 1).Scan(context.Background(), snapshot.NewReader(strings.NewReader(snap), "s.json"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range res.Findings {
		if f.Policy == "WARDEN-AWS-IAM-006" {
			keys = append(keys, f.Key)
		}
	}
	if !reflect.DeepEqual(keys, []string{"999999999999"}) {
		t.Errorf("IAM-006 keys = %v, want only the outside account 999999999999", keys)
	}
}

// The pack's version changes with any policy's source and only then: a test file or
// the order files are found in does not change it.
func TestVersion_followsThePoliciesSources(t *testing.T) {
	ctx := context.Background()
	version := func(files map[string]string) string {
		t.Helper()
		e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(files)}})
		if err != nil {
			t.Fatal(err)
		}
		return e.Version()
	}
	base := version(map[string]string{"ssh.rego": sshPolicy})
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("Version = %q", base)
	}
	withTest := version(map[string]string{"ssh.rego": sshPolicy, "ssh_test.rego": "package test.ssh_test\n\ntest_x if true\n"})
	edited := version(map[string]string{"ssh.rego": strings.Replace(sshPolicy, "opens 22", "opens port 22", 1)})
	renamed := version(map[string]string{"ssh2.rego": sshPolicy})
	if withTest != base {
		t.Errorf("a test file changed the version")
	}
	if edited == base || renamed == base {
		t.Errorf("an edited or renamed policy kept the version %s", base)
	}
}
