package waivers_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/waivers"
)

const good = `version: 1
waivers:
  - policy: WARDEN-AWS-NET-001
    resource: "arn:aws:ec2:*:111111111111:security-group/sg-0bastion*"
    reason: Bastion; SSH is limited by a network ACL
    owner: alice@acme.example
    expires: 2027-03-31
  - policy: WARDEN-CERT-*
    resource: tls://legacy.acme.example:443
    reason: Decommissioned in Q1
    owner: bob@acme.example
    expires: 2026-10-01T00:00:00Z
`

func TestParseAndMatch(t *testing.T) {
	set, err := waivers.Parse([]byte(good), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Waivers) != 2 || set.Waivers[0].Line != 3 || set.Waivers[1].Line != 8 {
		t.Fatalf("waivers = %+v", set.Waivers)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		policy, resource string
		active, expired  bool
	}{
		{"WARDEN-AWS-NET-001", "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0bastion01", true, false},
		{"WARDEN-AWS-NET-002", "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0bastion01", false, false},
		{"WARDEN-AWS-NET-001", "arn:aws:ec2:eu-west-1:222222222222:security-group/sg-0bastion01", false, false},
		{"WARDEN-CERT-001", "tls://legacy.acme.example:443", false, true},
	}
	for _, tt := range tests {
		a, x := set.Match(tt.policy, tt.resource, now)
		if (a != nil) != tt.active || (x != nil) != tt.expired {
			t.Errorf("Match(%s, %s) = active %v, expired %v; want %v, %v", tt.policy, tt.resource, a != nil, x != nil, tt.active, tt.expired)
		}
	}
	// A date-only expiry lasts through that day.
	last := time.Date(2027, 3, 31, 23, 59, 0, 0, time.UTC)
	if !set.Waivers[0].Active(last) || set.Waivers[0].Active(last.Add(time.Hour)) {
		t.Error("a waiver expiring 2027-03-31 must hold through that day and end after it")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"missing owner", "waivers:\n  - policy: X\n    resource: r\n    reason: y\n    expires: 2027-01-01\n", "line 2: waivers[0].owner: is required"},
		{"missing expiry", "waivers:\n  - policy: X\n    resource: r\n    reason: y\n    owner: o\n", "waivers[0].expires: is required: every waiver ends"},
		{"bad date", "waivers:\n  - policy: X\n    resource: r\n    reason: y\n    owner: o\n    expires: next year\n", `line 6: waivers[0].expires: "next year" is not a date`},
		{"typo", "waivers:\n  - policy: X\n    resource: r\n    reason: y\n    owner: o\n    expire: 2027-01-01\n", `line 6: waivers[0].expire: unknown field (did you mean "expires"?)`},
		{"not a list", "waivers: {}\n", "line 1: waivers: must be a list"},
		{"bad yaml", "waivers:\n  - policy: [\n", "read waivers w.yaml: line"},
		{"unknown top", "waiver: []\n", "line 1: waiver: unknown field"},
		{"list value", "waivers:\n  - policy: [a, b]\n    resource: r\n", "line 2: waivers[0].policy: must be a single value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := waivers.Parse([]byte(tt.in), "w.yaml")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			var we *waivers.Error
			if !errors.As(err, &we) {
				t.Errorf("error is %T, want *waivers.Error", err)
			}
		})
	}
}

func TestCheckPolicies(t *testing.T) {
	set, _ := waivers.Parse([]byte(strings.Replace(good, "WARDEN-AWS-NET-001", "WARDEN-AWS-NET-01", 1)), "w.yaml")
	err := set.CheckPolicies([]string{"WARDEN-AWS-NET-001", "WARDEN-CERT-001"})
	if err == nil || !strings.Contains(err.Error(), `line 3: waivers[0].policy: unknown policy "WARDEN-AWS-NET-01" (did you mean "WARDEN-AWS-NET-001"?)`) {
		t.Errorf("error = %v", err)
	}
}

// one is a complete waiver whose lines are 2 (policy) to 6 (expires).
const one = `waivers:
  - policy: WARDEN-AWS-NET-001
    resource: arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1
    reason: Bastion
    owner: alice@acme.example
    expires: 2027-03-31
`

// TestParse_refusesWhatWouldWaiveSilently covers inputs a YAML reader accepts but that a
// reviewer would read differently from what applies, or that waive by accident.
func TestParse_refusesWhatWouldWaiveSilently(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"duplicate key in a waiver", one + "    owner: mallory@evil.example\n",
			`line 7: waivers[0].owner: duplicate key "owner" (first set at line 5)`},
		{"duplicate resource widens the waiver", one + "    resource: \"*\"\n",
			`line 7: waivers[0].resource: duplicate key "resource" (first set at line 3)`},
		{"duplicate waivers list", one + "waivers: []\n",
			`line 7: waivers: duplicate key "waivers" (first set at line 1)`},
		{"duplicate version", "version: 1\nversion: 2\nwaivers: []\n",
			`line 2: version: duplicate key "version" (first set at line 1)`},
		{"second document", one + "---\nwaivers:\n  - policy: X\n",
			`line 7: a second YAML document`},
		{"empty second document", one + "---\n", `line 7: a second YAML document`},
		{"second document after an end marker", one + "...\n---\nwaivers: []\n", `line 8: a second YAML document`},
		{"null owner", strings.Replace(one, "alice@acme.example", "~", 1), `line 5: waivers[0].owner: is empty (YAML null "~")`},
		{"null reason", strings.Replace(one, "Bastion", "null", 1), `line 4: waivers[0].reason: is empty (YAML null "null")`},
		{"boolean reason", strings.Replace(one, "Bastion", "true", 1), `line 4: waivers[0].reason: must be a string, not bool "true"`},
		{"numeric policy", strings.Replace(one, "WARDEN-AWS-NET-001", "1", 1), `line 2: waivers[0].policy: must be a string, not int "1"`},
		{"numeric expiry", strings.Replace(one, "2027-03-31", "20270331", 1), `line 6: waivers[0].expires: must be a string, not int "20270331"`},
		{"every policy on every resource", strings.Replace(strings.Replace(one, "WARDEN-AWS-NET-001", `"*"`, 1),
			"arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", `"**"`, 1),
			`line 2: waivers[0]: policy "*" on resource "**" waives every finding`},
		{"wildcards only", strings.Replace(strings.Replace(one, "WARDEN-AWS-NET-001", `"?*"`, 1),
			"arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", `"*?"`, 1),
			`waives every finding`},
		// Already refused; kept so that it stays so.
		{"blank resource", strings.Replace(one, "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", `"  "`, 1),
			`line 2: waivers[0].resource: is required`},
		{"no such day", strings.Replace(one, "2027-03-31", "2027-02-30", 1), `line 6: waivers[0].expires: "2027-02-30" is not a date`},
		{"date and time without a zone", strings.Replace(one, "2027-03-31", "2027-03-31T10:00:00", 1), `line 6: waivers[0].expires: "2027-03-31T10:00:00" is not a date`},
		{"merge key", one + "    <<: {owner: x}\n", `line 7: waivers[0].<<: must be a single value`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := waivers.Parse([]byte(tt.in), "w.yaml")
			if err == nil {
				t.Fatalf("accepted %d waivers (%+v), want an error containing %q", len(set.Waivers), set.Waivers, tt.want)
			}
			if !strings.Contains(err.Error(), "read waivers w.yaml: "+tt.want) && !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
			var we *waivers.Error
			if !errors.As(err, &we) || we.Line == 0 {
				t.Errorf("error %v is %T without a line, want a located *waivers.Error", err, err)
			}
		})
	}
}

// TestParse_acceptsHarmlessYAML keeps the checks from refusing what means one thing only.
func TestParse_acceptsHarmlessYAML(t *testing.T) {
	tests := []struct {
		name, in string
		n        int
	}{
		{"comments only", "# no waivers yet\n", 0},
		{"document markers", "---\n" + one + "...\n", 1},
		{"quoted values", strings.Replace(one, "Bastion", `"Bastion"`, 1), 1},
		{"wildcard policy on one resource", strings.Replace(one, "WARDEN-AWS-NET-001", `"*"`, 1), 1},
		{"one policy on every resource", strings.Replace(one, "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", `"*"`, 1), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set, err := waivers.Parse([]byte(tt.in), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Waivers) != tt.n {
				t.Fatalf("%d waivers, want %d", len(set.Waivers), tt.n)
			}
		})
	}
}

func TestCheckPolicies_refusesPolicyMatchingNothing(t *testing.T) {
	ids := []string{"WARDEN-AWS-IAM-001", "WARDEN-AWS-IAM-012", "WARDEN-AWS-NET-001", "WARDEN-GCP-NET-001"}
	tests := []struct{ policy, want string }{
		{"WARDEN-AWS-IMA-*", `line 2: waivers[0].policy: policy glob "WARDEN-AWS-IMA-*" matches none of the 4 loaded policies (did you mean "WARDEN-AWS-IAM-*"?)`},
		{"WARDEN-AZURE-*", `line 2: waivers[0].policy: policy glob "WARDEN-AZURE-*" matches none of the 4 loaded policies`},
		{"*-K8S-*", `policy glob "*-K8S-*" matches none of the 4 loaded policies`},
		{"WARDEN-AWS-NET-00?", ""},
		{"WARDEN-AWS-IAM-*", ""},
		{"*-NET-*", ""},
		{"WARDEN-AWS-NET-001", ""},
		{"warden-aws-net-001", `unknown policy "warden-aws-net-001" (did you mean "WARDEN-AWS-NET-001"?)`},
		{"WARDEN-AWS-NET-01", `unknown policy "WARDEN-AWS-NET-01" (did you mean "WARDEN-AWS-NET-001"?)`},
	}
	for _, tt := range tests {
		t.Run(tt.policy, func(t *testing.T) {
			set, err := waivers.Parse([]byte(strings.Replace(one, "WARDEN-AWS-NET-001", `"`+tt.policy+`"`, 1)), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = set.CheckPolicies(ids)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused a policy that matches: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"a*c", "abbbc", true},
		{"a*c", "abbbd", false},
		{"arn:aws:ec2:*:1:security-group/*", "arn:aws:ec2:eu-west-1:1:security-group/sg-1", true},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"*x*y", "axbxy", true},
		{"exact", "exact", true},
		{"exact", "exactly", false},
	}
	for _, tt := range tests {
		if got := waivers.Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte("waivers:\n  - {}\n"))
	f.Add([]byte("waivers: ~\n"))
	f.Add([]byte(one + "    owner: mallory\n"))
	f.Add([]byte(one + "---\nwaivers: []\n"))
	f.Add([]byte("version: 1\nversion: 1\n" + one[:len(one)-1]))
	f.Add([]byte(strings.Replace(one, "Bastion", "~", 1)))
	f.Add([]byte("waivers:\n  - &w {policy: \"*\", resource: \"*\", reason: r, owner: o, expires: 2027-01-01}\n  - *w\n"))
	f.Add([]byte(strings.Replace(one, "Bastion", strings.Repeat("long ", 64), 1)))
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := waivers.Parse(data, "fuzz.yaml")
		if err != nil {
			var we *waivers.Error
			if !errors.As(err, &we) {
				t.Fatalf("error %v is %T, want *waivers.Error", err, err)
			}
			return
		}
		for _, w := range set.Waivers {
			if w.Policy == "" || w.Resource == "" || w.Owner == "" || w.Reason == "" || w.Expires.IsZero() {
				t.Fatalf("accepted an incomplete waiver: %+v", w)
			}
			if w.Line <= 0 {
				t.Fatalf("accepted a waiver without a line: %+v", w)
			}
			if strings.Trim(w.Policy, "*?") == "" && strings.Trim(w.Resource, "*?") == "" {
				t.Fatalf("accepted a waiver of every finding: %+v", w)
			}
		}
	})
}

func FuzzGlob(f *testing.F) {
	f.Add("a*b?c", "axxbyc")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		waivers.Glob(pattern, s)
		if !waivers.Glob(s, s) && !strings.ContainsAny(s, "*?") {
			t.Fatalf("a literal pattern %q must match itself", s)
		}
	})
}

// A glob that covers every loaded policy on a wildcard resource waives every finding,
// like "*" on "*".
func TestCheckPolicies_refusesAGlobCoveringEverything(t *testing.T) {
	ids := []string{"WARDEN-AWS-IAM-001", "WARDEN-AWS-NET-001", "WARDEN-GCP-NET-001"}
	tests := []struct{ policy, resource, want string }{
		{"W*", "*", `line 2: waivers[0]: policy "W*" matches every one of the 3 loaded policies and resource "*" every resource`},
		{"WARDEN-*", "**", `this waiver would suppress every finding`},
		{"WARDEN-AWS-*", "*", ""},
		{"W*", "arn:aws:ec2:*:111111111111:security-group/sg-0bastion*", ""},
	}
	for _, tt := range tests {
		t.Run(tt.policy+" on "+tt.resource, func(t *testing.T) {
			doc := fmt.Sprintf("waivers:\n  - policy: %q\n    resource: %q\n    reason: r\n    owner: o@x\n    expires: 2027-03-31\n", tt.policy, tt.resource)
			set, err := waivers.Parse([]byte(doc), "w.yaml")
			if err != nil {
				t.Fatal(err)
			}
			err = set.CheckPolicies(ids)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("error = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}
