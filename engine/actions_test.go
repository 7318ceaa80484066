package engine_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// catalog is the remediators' catalog as cmd/warden passes it (remediators/builtin):
// engine may not import remediators, so the test spells it out.
func catalog() map[string][]engine.ActionParam {
	req := func(n string) engine.ActionParam { return engine.ActionParam{Name: n, Required: true} }
	opt := func(n string) engine.ActionParam { return engine.ActionParam{Name: n} }
	return map[string][]engine.ActionParam{
		"aws.iam.deactivate_access_key": nil, "aws.iam.detach_policy": {opt("inline_policy"), opt("attachment")},
		"aws.iam.update_trust_policy": {req("principal")}, "aws.iam.set_password_policy": {opt("setting"), opt("max_password_age")},
		"aws.iam.delete_login_profile": nil, "aws.iam.delete_server_certificate": nil,
		"aws.ec2.revoke_ingress": {req("target")}, "aws.ec2.revoke_default_sg_rules": {req("target")},
		"gcp.iam.remove_binding_member":       {req("role"), req("member"), opt("condition")},
		"gcp.iam.apply_role_recommendation":   {req("role"), req("member"), opt("new_roles"), req("recommendation")},
		"gcp.iam.disable_service_account_key": nil, "gcp.compute.disable_firewall": nil,
		"aws.iam.rotate_access_key": nil, "certs.renew": nil, "aws.iam.rightsize_inline_policy": {opt("window_days")},
		"aws.iam.rightsize_managed_policy": {opt("window_days")}, "aws.iam.replace_managed_attachment": {req("policy"), req("used_services"), opt("window_days")},
	}
}

func remediationPolicy(remediation, violation string) string {
	return fmt.Sprintf(`# METADATA
# title: Remediation check
# custom:
#   id: TEST-REM-001
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   remediation: %s
package test.rem

deny contains %s if {
	input.resource.name != ""
}
`, remediation, violation)
}

func TestNew_checksRemediationAgainstTheCatalog(t *testing.T) {
	tests := []struct{ name, remediation, want string }{
		{"unknown action with a suggestion", `{action: aws.ec2.revoke_ingres, risk: medium, params: [target]}`,
			`unknown action "aws.ec2.revoke_ingres" (did you mean "aws.ec2.revoke_ingress"?)`},
		{"required param not declared", `{action: aws.ec2.revoke_ingress, risk: medium}`, `needs param "target"`},
		{"declared name the action does not take", `{action: aws.ec2.revoke_ingress, risk: medium, params: [target, rule]}`, `takes no param "rule"`},
		{"notice with params", `{action: notify, risk: none, params: [target]}`, `notify takes no params`},
		{"unknown risk", `{action: notify, risk: severe}`, `"severe" is not one of`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"p.rego": {Data: []byte(remediationPolicy(tc.remediation, `"v"`))}}
			_, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys, Prefix: "user"}}, Actions: catalog()})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "user/p.rego:1:") {
				t.Fatalf("error %v, want user/p.rego:1: … %s", err, tc.want)
			}
		})
	}
}

func TestNew_builtInPackMatchesTheCatalog(t *testing.T) {
	if _, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}, Actions: catalog()}); err != nil {
		t.Fatal(err)
	}
}

func TestEvaluate_violationWithoutARequiredParamIsAnEvalError(t *testing.T) {
	sg := snapshot.Resource{UID: "arn:aws:ec2:us-east-1:111111111111:security-group/sg-1", Type: "aws.ec2.security_group", Name: "web",
		Account: "111111111111", Region: "us-east-1", Tags: map[string]string{},
		Attributes: map[string]any{"group_id": "sg-1", "vpc_id": "vpc-1", "ingress": []any{}, "egress": []any{}}}
	tests := []struct {
		name, violation string
		wantErr         bool
		wantParam       any
	}{
		{"param present is passed on", `{"msg": "m", "target": "r1"}`, false, "r1"},
		{"required param missing", `{"msg": "m"}`, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"p.rego": {Data: []byte(remediationPolicy(`{action: aws.ec2.revoke_ingress, risk: medium, params: [target]}`, tc.violation))}}
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys, Prefix: "user"}}, Actions: catalog()})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			res, err := e.Evaluate(context.Background(), snapshot.Header{Version: 1, CollectedAt: now}, now, []snapshot.Resource{sg})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr {
				if len(res.EvalErrors) != 1 || len(res.Findings) != 0 || !strings.Contains(res.EvalErrors[0].Error, `lacks "target"`) {
					t.Fatalf("findings %v, errors %v: want one eval error naming the missing param", res.Findings, res.EvalErrors)
				}
				return
			}
			if len(res.Findings) != 1 || res.Findings[0].Remediation.Params["target"] != tc.wantParam {
				t.Fatalf("findings %+v, errors %v", res.Findings, res.EvalErrors)
			}
		})
	}
}

// TestEvaluate_violationOwnAction: a policy that only notifies may offer a fix in one
// violation; that violation must say the fix's risk, and passes the params the fix takes
// (not the policy's); a violation naming a notice is a notice.
func TestEvaluate_violationOwnAction(t *testing.T) {
	sg := snapshot.Resource{UID: "arn:aws:ec2:us-east-1:111111111111:security-group/sg-1", Type: "aws.ec2.security_group", Name: "web",
		Account: "111111111111", Region: "us-east-1", Tags: map[string]string{},
		Attributes: map[string]any{"group_id": "sg-1", "vpc_id": "vpc-1", "ingress": []any{}, "egress": []any{}}}
	tests := []struct {
		name, remediation, violation string
		wantErr                      string
		wantAction                   string
		wantRisk                     findings.Risk
		wantParams                   map[string]any
	}{
		{"a notice offering a fix with its risk", `{action: notify, risk: none}`,
			`{"msg": "m", "action": "aws.ec2.revoke_ingress", "risk": "high", "target": "r1", "other": 1}`,
			"", "aws.ec2.revoke_ingress", findings.RiskHigh, map[string]any{"target": "r1"}},
		{"without its risk", `{action: notify, risk: none}`, `{"msg": "m", "action": "aws.ec2.revoke_ingress", "target": "r1"}`,
			"without its risk", "", 0, nil},
		{"with risk none", `{action: notify, risk: none}`, `{"msg": "m", "action": "aws.ec2.revoke_ingress", "risk": "none", "target": "r1"}`,
			"without its risk", "", 0, nil},
		{"without the fix's required param", `{action: notify, risk: none}`, `{"msg": "m", "action": "aws.ec2.revoke_ingress", "risk": "low"}`,
			`lacks "target"`, "", 0, nil},
		{"a fix's violation falling back to a notice", `{action: aws.ec2.revoke_ingress, risk: medium, params: [target]}`,
			`{"msg": "m", "action": "notify", "target": "r1"}`, "", "notify", findings.RiskNone, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{"p.rego": {Data: []byte(remediationPolicy(tc.remediation, tc.violation))}}
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys, Prefix: "user"}}, Actions: catalog()})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
			res, err := e.Evaluate(context.Background(), snapshot.Header{Version: 1, CollectedAt: now}, now, []snapshot.Resource{sg})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if len(res.EvalErrors) != 1 || len(res.Findings) != 0 || !strings.Contains(res.EvalErrors[0].Error, tc.wantErr) {
					t.Fatalf("findings %v, errors %v: want one eval error saying %q", res.Findings, res.EvalErrors, tc.wantErr)
				}
				return
			}
			if len(res.Findings) != 1 {
				t.Fatalf("findings %+v, errors %v", res.Findings, res.EvalErrors)
			}
			r := res.Findings[0].Remediation
			if r.Action != tc.wantAction || r.Risk != tc.wantRisk || !reflect.DeepEqual(r.Params, tc.wantParams) {
				t.Errorf("remediation %+v, want %s at %v with %v", r, tc.wantAction, tc.wantRisk, tc.wantParams)
			}
			if _, ok := res.Findings[0].Details["risk"]; ok {
				t.Errorf("the risk is left among the details: %v", res.Findings[0].Details)
			}
		})
	}
}
