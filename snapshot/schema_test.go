package snapshot_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/snapshot"
)

// snap wraps resource objects (one per line from line 2 on) into a snapshot.
func snap(resources ...string) string {
	return "{\"version\": 1, \"resources\": [\n" + strings.Join(resources, ",\n") + "\n]}\n"
}

const (
	okKey   = `{"uid": "arn:aws:iam::1:user/a/accesskey/AKIA1", "type": "aws.iam.access_key", "attributes": {"status": "Active", "created": "2026-01-01T00:00:00Z"}}`
	okRoot  = `{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "attributes": {"mfa_active": false, "access_keys_active": 0}}`
	okGroup = `{"uid": "arn:aws:ec2:eu-west-1:1:security-group/sg-1", "type": "aws.ec2.security_group", "attributes": {"ingress": [{"id": "r", "protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0"}]}}`
)

func TestReader_refusesAttributesOutsideTheirSchema(t *testing.T) {
	key := func(attrs string) string {
		return `{"uid": "arn:aws:iam::1:user/a/accesskey/AKIA1", "type": "aws.iam.access_key", "attributes": ` + attrs + `}`
	}
	sg := func(rule string) string {
		return `{"uid": "arn:aws:ec2:eu-west-1:1:security-group/sg-1", "type": "aws.ec2.security_group", "attributes": {"ingress": [` + rule + `]}}`
	}
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"time in words", snap(okRoot, key(`{"status": "Active", "created": "last tuesday"}`)),
			`line 3: resources[1].attributes.created: "last tuesday" is not an RFC 3339 time`},
		{"negative year", snap(key(`{"status": "Active", "created": "-0001-01-01"}`)),
			`resources[0].attributes.created: "-0001-01-01" is not an RFC 3339 time`},
		{"year zero", snap(key(`{"status": "Active", "created": "0001-01-01T00:00:00Z"}`)),
			`resources[0].attributes.created: "0001-01-01T00:00:00Z" is before 1970`},
		{"time as a number", snap(key(`{"status": "Active", "created": 1767225600}`)),
			`resources[0].attributes.created: expected an RFC 3339 time such as "2026-11-30T12:00:00Z", found the number 1767225600`},
		{"required time missing", snap(key(`{"status": "Active"}`)),
			`resources[0].attributes: "created" is required`},
		{"required time null", snap(key(`{"status": "Active", "created": null}`)),
			`resources[0].attributes.created: is required and may not be null`},
		{"status outside its set", snap(key(`{"status": "active", "created": "2026-01-01T00:00:00Z"}`)),
			`resources[0].attributes.status: "active" is not one of "Active", "Inactive"`},
		{"misspelt attribute", snap(key(`{"status": "Active", "created": "2026-01-01T00:00:00Z", "last_usd": null}`)),
			`resources[0].attributes.last_usd: unknown field (did you mean "last_used"?)`},
		{"flag as a string", snap(`{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user", "attributes": {"mfa_active": "false", "access_keys_active": 0}}`),
			`resources[0].attributes.mfa_active: expected true or false, found the string "false"`},
		{"huge port", snap(sg(`{"id": "r", "protocol": "tcp", "from_port": 1e400, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].from_port: expected an integer, found 1e400`},
		{"port out of range", snap(sg(`{"id": "r", "protocol": "tcp", "from_port": 22, "to_port": 65536, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].to_port: 65536 is outside -1-65535`},
		{"fractional port", snap(sg(`{"id": "r", "protocol": "tcp", "from_port": 22.5, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].from_port: expected an integer, found 22.5`},
		{"protocol with a space", snap(sg(`{"id": "r", "protocol": " tcp", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].protocol: " tcp" is not a protocol`},
		{"protocol number with a leading zero", snap(sg(`{"id": "r", "protocol": "06", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].protocol: "06" is not a protocol`},
		{"ports in the wrong order", snap(sg(`{"id": "r", "protocol": "tcp", "from_port": 23, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0].from_port: 23 is above to_port 22`},
		{"rule without id", snap(sg(`{"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0]: "id" is required`},
		{"rule without protocol", snap(sg(`{"id": "r", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0"}`)),
			`resources[0].attributes.ingress[0]: "protocol" is required`},
		{"NaN in a policy document", snap(`{"uid": "arn:aws:iam::1:policy/p", "type": "aws.iam.policy", "attributes": {"document": {"Version": NaN}}}`),
			`resources[0]: invalid JSON`},
		{"no attributes at all", snap(`{"uid": "arn:aws:iam::1:root", "type": "aws.iam.root_user"}`),
			`resources[0].attributes: "mfa_active" is required`},
		{"firewall direction", snap(`{"uid": "//compute.googleapis.com/projects/p/global/firewalls/f", "type": "gcp.compute.firewall", "attributes": {"direction": "IN"}}`),
			`resources[0].attributes.direction: "IN" is not one of "INGRESS", "EGRESS"`},
		{"certificate without expiry", snap(`{"uid": "tls://a:443", "type": "tls.endpoint", "attributes": {"host": "a", "port": 443, "reachable": true, "certificate": {"not_before": "2026-01-01T00:00:00Z", "key_algorithm": "RSA", "key_size": 2048, "signature_algorithm": "SHA256-RSA"}}}`),
			`resources[0].attributes.certificate: "not_after" is required`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantReadError(t, tt.in, tt.want) })
	}
	// An ICMP rule carries a type and a code in its port fields, in any order.
	okICMP := `{"uid": "arn:aws:ec2:eu-west-1:1:security-group/sg-2", "type": "aws.ec2.security_group", "attributes": {"ingress": [{"id": "r", "protocol": "icmp", "from_port": 8, "to_port": -1, "cidr": "0.0.0.0/0"}]}}`
	if _, rs, err := snapshot.ReadAll(strings.NewReader(snap(okKey, okRoot, okGroup, okICMP)), "ok.json"); err != nil || len(rs) != 4 {
		t.Fatalf("valid resources: %v (%d read)", err, len(rs))
	}
}

func TestReader_refusesDuplicateKeys(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"in attributes, hiding IAM-012", snap("{\"uid\": \"arn:aws:iam::1:root\", \"type\": \"aws.iam.root_user\", \"attributes\": {\"mfa_active\": false,\n \"access_keys_active\": 0,\n \"mfa_active\": true}}"),
			`line 4: resources[0].attributes.mfa_active: appears twice in one object`},
		{"in the resource", snap(`{"uid": "a", "type": "aws.iam.group", "uid": "b"}`),
			`line 2: resources[0].uid: appears twice in one resource`},
		{"in tags", snap(`{"uid": "a", "type": "aws.iam.group", "tags": {"env": "prod", "env": "dev"}}`),
			`resources[0].tags.env: appears twice in one object`},
		{"in a policy document", snap("{\"uid\": \"arn:aws:iam::1:policy/p\", \"type\": \"aws.iam.policy\", \"attributes\": {\"document\": {\"Statement\": [\n{\"Effect\": \"Allow\", \"Action\": \"*\", \"Resource\": \"*\",\n \"Effect\": \"Deny\"}]}}}"),
			`line 4: resources[0].attributes.document.Statement[0].Effect: appears twice in one object`},
		{"in a rule", snap(`{"uid": "arn:aws:ec2:eu-west-1:1:security-group/sg-1", "type": "aws.ec2.security_group", "attributes": {"ingress": [{"id": "r", "protocol": "tcp", "from_port": 22, "to_port": 22, "cidr": "0.0.0.0/0", "cidr": "10.0.0.0/8"}]}}`),
			`resources[0].attributes.ingress[0].cidr: appears twice in one object`},
		{"in a scope", `{"version": 1, "scopes": [{"id": "aws/1/iam", "status": "failed", "status": "ok"}], "resources": []}`,
			`line 1: scopes[0].status: appears twice in one object`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantReadError(t, tt.in, tt.want) })
	}
}

func TestSchemaCoversEveryType(t *testing.T) {
	for _, typ := range snapshot.Types() {
		if !snapshot.HasSchema(typ) {
			t.Errorf("type %s has no attribute schema", typ)
		}
	}
}

func TestReader_refusesTimesThatContradictCollectedAt(t *testing.T) {
	head := "{\"version\": 1, \"collected_at\": \"2026-11-30T12:00:00Z\", \"resources\": [\n"
	key := func(created string) string {
		return head + `{"uid": "k", "type": "aws.iam.access_key", "attributes": {"status": "Active", "created": "` + created + `"}}` + "\n]}"
	}
	tests := []struct {
		name, in, want string
	}{
		{"key created after the snapshot", key("2199-01-01T00:00:00Z"),
			`line 2: resources[0].attributes.created: "2199-01-01T00:00:00Z" is after the snapshot's collected_at (2026-11-30T12:00:00Z)`},
		{"collected_at after the resources", "{\"version\": 1, \"resources\": [],\n \"collected_at\": \"2026-11-30T12:00:00Z\"}",
			`line 2: collected_at: comes after "resources"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := snapshot.ReadAll(strings.NewReader(tt.in), "snap.json")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
	// Clock skew of up to a day is not a contradiction, and a future expiry is no event.
	for _, in := range []string{key("2026-12-01T06:00:00Z"),
		head + `{"uid": "tls://a:443", "type": "tls.endpoint", "attributes": {"host": "a", "port": 443, "reachable": true, "certificate": {"not_before": "2026-01-01T00:00:00Z", "not_after": "2099-01-01T00:00:00Z", "key_algorithm": "RSA", "key_size": 2048, "signature_algorithm": "SHA256-RSA"}}}` + "\n]}"} {
		if _, _, err := snapshot.ReadAll(strings.NewReader(in), "ok.json"); err != nil {
			t.Errorf("refused: %v", err)
		}
	}
}

// wantReadError reads a whole snapshot and checks that it is refused with want.
func wantReadError(t *testing.T, in, want string) {
	t.Helper()
	_, _, err := snapshot.ReadAll(strings.NewReader(in), "snap.json")
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q\nwant it to contain %q", err, want)
	}
}
