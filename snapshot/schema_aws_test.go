package snapshot_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/snapshot"
)

// The attributes of issue 12's AWS data: MFA devices, the root's key use and device kind,
// the account view, ACM transparency logging.

func TestSchemaAWSAccountAndMFA(t *testing.T) {
	root := func(attrs string) string {
		return `{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "attributes": {"mfa_active": true, "access_keys_active": 1` + attrs + `}}`
	}
	user := func(devices string) string {
		return `{"uid": "arn:aws:iam::1:user/a", "type": "aws.iam.user", "attributes": {"mfa_devices": ` + devices + `}}`
	}
	account := func(attrs string) string {
		return `{"uid": "arn:aws:iam::1:account", "type": "aws.iam.account", "name": "1", "account": "1", "region": "global", "attributes": {` + attrs + `}}`
	}
	cert := func(ct string) string {
		return `{"uid": "arn:aws:acm:eu-west-1:1:certificate/c", "type": "aws.acm.certificate", "attributes": {"status": "ISSUED", "transparency_logging": ` + ct + `}}`
	}
	ok := []string{
		root(`, "virtual_mfa": false, "access_keys_last_used": "2026-11-02T07:15:00Z", "access_keys": [{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z", "last_used": "2026-11-02T07:15:00Z"}]`),
		root(``), // neither read
		user(`[{"serial": "arn:aws:iam::1:mfa/a", "type": "virtual", "enabled": "2025-01-01T00:00:00Z"}, {"serial": "GAHT12345678", "type": "hardware"}]`),
		user(`[]`),
		account(`"support_roles": ["support"], "security_audit_roles": [], "saml_providers": ["arn:aws:iam::1:saml-provider/okta"], "alias": "acme"`),
		account(`"support_roles": [], "security_audit_roles": []`),
		cert(`"DISABLED"`),
	}
	_, rs, err := snapshot.ReadAll(strings.NewReader(snap(ok...)), "ok.json")
	if err != nil || len(rs) != len(ok) {
		t.Fatalf("valid resources: %v (%d read)", err, len(rs))
	}
	if rs[4].Scope != "aws/1/iam" {
		t.Errorf("the account view's default scope = %q, want aws/1/iam (the account's IAM scope)", rs[4].Scope)
	}
	tests := []struct{ name, in, want string }{
		{"virtual_mfa as a string", snap(root(`, "virtual_mfa": "yes"`)), `resources[0].attributes.virtual_mfa: expected true or false`},
		{"key use not a time", snap(root(`, "access_keys_last_used": "N/A"`)), `resources[0].attributes.access_keys_last_used: "N/A" is not an RFC 3339 time`},
		{"root key without creation", snap(root(`, "access_keys": [{"slot": "1", "status": "Active"}]`)), `resources[0].attributes.access_keys[0]: "created" is required`},
		{"root key slot outside its set", snap(root(`, "access_keys": [{"slot": "3", "status": "Active", "created": "2019-04-03T11:20:00Z"}]`)), `resources[0].attributes.access_keys[0].slot: "3" is not one of "1", "2"`},
		{"device kind outside its set", snap(user(`[{"serial": "s", "type": "sms"}]`)), `resources[0].attributes.mfa_devices[0].type: "sms" is not one of "virtual", "hardware"`},
		{"device without serial", snap(user(`[{"type": "virtual"}]`)), `resources[0].attributes.mfa_devices[0]: "serial" is required`},
		{"device without type", snap(user(`[{"serial": "s"}]`)), `resources[0].attributes.mfa_devices[0]: "type" is required`},
		{"account without support roles", snap(account(`"security_audit_roles": []`)), `resources[0].attributes: "support_roles" is required`},
		{"account without audit roles", snap(account(`"support_roles": []`)), `resources[0].attributes: "security_audit_roles" is required`},
		{"misspelt account field", snap(account(`"support_roles": [], "security_audit_roles": [], "saml_provider": []`)), `resources[0].attributes.saml_provider: unknown field (did you mean "saml_providers"?)`},
		{"transparency outside its set", snap(cert(`"OFF"`)), `resources[0].attributes.transparency_logging: "OFF" is not one of "ENABLED", "DISABLED"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantReadError(t, tt.in, tt.want) })
	}
}

// attributes.usage of issue 29: IAM's last-accessed data on users, roles and groups.
func TestSchemaAWSUsage(t *testing.T) {
	principal := func(typ, usage string) string {
		attrs := `"usage": ` + usage
		if typ == "role" {
			attrs += `, "assume_role_policy": {}`
		}
		return `{"uid": "arn:aws:iam::1:` + typ + `/a", "type": "aws.iam.` + typ + `", "attributes": {` + attrs + `}}`
	}
	full := `{"source": "aws.access_advisor", "granularity": "action", "as_of": "2026-11-30T11:52:00Z", "tracked_since": "2025-10-26T11:52:00Z", "complete": true, "error": "",
		"services": [{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1",
			"actions": [{"action": "s3:GetObject", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"}, {"action": "s3:PutObject", "last_used": null, "region": null}]},
			{"service": "kms", "name": "AWS KMS", "last_used": null, "region": null}]}`
	failed := `{"source": "aws.access_advisor", "complete": false, "error": "GetServiceLastAccessedDetails: job FAILED"}`
	ok := []string{principal("user", full), principal("role", full), principal("group", full), principal("user", failed)}
	_, rs, err := snapshot.ReadAll(strings.NewReader(snap(ok...)), "ok.json")
	if err != nil || len(rs) != len(ok) {
		t.Fatalf("valid resources: %v (%d read)", err, len(rs))
	}
	tests := []struct{ name, in, want string }{
		{"complete as a string", snap(principal("user", `{"source": "aws.access_advisor", "complete": "yes"}`)), `resources[0].attributes.usage.complete: expected true or false`},
		{"without complete", snap(principal("role", `{"source": "aws.access_advisor"}`)), `resources[0].attributes.usage: "complete" is required`},
		{"granularity outside its set", snap(principal("user", `{"source": "s", "complete": true, "granularity": "api"}`)), `resources[0].attributes.usage.granularity: "api" is not one of "action", "service"`},
		{"last use not a time", snap(principal("group", `{"source": "s", "complete": true, "services": [{"service": "s3", "last_used": "recently"}]}`)), `resources[0].attributes.usage.services[0].last_used: "recently" is not an RFC 3339 time`},
		{"service without namespace", snap(principal("user", `{"source": "s", "complete": true, "services": [{"name": "Amazon S3"}]}`)), `resources[0].attributes.usage.services[0]: "service" is required`},
		{"misspelt action field", snap(principal("user", `{"source": "s", "complete": true, "services": [{"service": "s3", "actions": [{"action": "s3:GetObject", "last_use": null}]}]}`)), `resources[0].attributes.usage.services[0].actions[0].last_use: unknown field (did you mean "last_used"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantReadError(t, tt.in, tt.want) })
	}
}
