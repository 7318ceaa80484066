package waivers_test

import (
	"errors"
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
	f.Fuzz(func(t *testing.T, data []byte) {
		set, err := waivers.Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		for _, w := range set.Waivers {
			if w.Policy == "" || w.Resource == "" || w.Owner == "" || w.Reason == "" || w.Expires.IsZero() {
				t.Fatalf("accepted an incomplete waiver: %+v", w)
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
