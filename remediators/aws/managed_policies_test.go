package aws

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/usage/usagetest"
	"github.com/warden-sec/warden/remediators"
)

// A service is wholly granted only by an unconditional Allow of all its actions on every
// resource, with no Deny that could touch it.
func TestNotWhollyGranted(t *testing.T) {
	services := []string{"s3", "sqs", "iam"}
	tests := []struct {
		name, doc  string
		notGranted []string
	}{
		{"AdministratorAccess grants everything",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`, nil},
		{"a single statement object, Action and Resource as lists",
			`{"Statement":{"Effect":"Allow","Action":["sqs:*","S3:*"],"Resource":["arn:aws:s3:::b","*"]}}`, []string{"iam"}},
		{"a service-part wildcard with every action covers the service",
			`{"Statement":[{"Effect":"Allow","Action":"s*:*","Resource":"*"}]}`, []string{"iam"}},
		{"some actions of a service are not all of them",
			`{"Statement":[{"Effect":"Allow","Action":["s3:Get*","sqs:SendMessage","iam:*"],"Resource":"*"}]}`, []string{"s3", "sqs"}},
		{"one resource is not every resource",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"arn:aws:s3:::b"}]}`, services},
		{"a condition makes the grant partial",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*","Condition":{"Bool":{"aws:MultiFactorAuthPresent":"true"}}}]}`, services},
		{"NotResource makes the grant partial",
			`{"Statement":[{"Effect":"Allow","Action":"*","NotResource":"arn:aws:s3:::secret"}]}`, services},
		{"PowerUserAccess: NotAction spares the services it does not name",
			`{"Statement":[{"Effect":"Allow","NotAction":["iam:*","organizations:*","account:*"],"Resource":"*"},{"Effect":"Allow","Action":["iam:CreateServiceLinkedRole","iam:ListRoles"],"Resource":"*"}]}`,
			[]string{"iam"}},
		{"a NotAction naming one action of a service takes the service out",
			`{"Statement":[{"Effect":"Allow","NotAction":"s3:DeleteBucket","Resource":"*"}]}`, []string{"s3"}},
		{"a NotAction glob over service names takes each matching service out",
			`{"Statement":[{"Effect":"Allow","NotAction":["S?S:*","i*"],"Resource":"*"}]}`, []string{"sqs", "iam"}},
		{"a Deny of one action of a service, even on one resource, takes it out",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"s3:DeleteBucket","Resource":"arn:aws:s3:::logs"}]}`, []string{"s3"}},
		{"a Deny whose pattern can name an action of a service takes it out; a longer service name does not",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":["s?s:Send*","s3-outposts:*"],"Resource":"*"}]}`, []string{"sqs"}},
		{"a Deny of another service changes nothing",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":["kms:*","ec2:TerminateInstances"],"Resource":"*"}]}`, nil},
		{"a conditional Deny of everything takes everything out",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Action":"*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`, services},
		{"a Deny with NotAction spares only the services it lists in full",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","NotAction":["s3:*","sqs:SendMessage"],"Resource":"*"}]}`, []string{"sqs", "iam"}},
		{"a Deny without Action or NotAction is not understood: it takes everything out",
			`{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"},{"Effect":"Deny","Resource":"*"}]}`, services},
		{"an Allow NotAction with a non-string pattern proves nothing",
			`{"Statement":[{"Effect":"Allow","NotAction":[1],"Resource":"*"}]}`, services},
		{"no statement grants nothing",
			`{"Version":"2012-10-17"}`, services},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := notWhollyGranted(doc(t, tt.doc), services)
			if !slices.Equal(got, tt.notGranted) {
				t.Errorf("not wholly granted %q, want %q", got, tt.notGranted)
			}
		})
	}
}

// The generated policy's name is IAM's charset, at most 128 characters, and distinct for
// principals whose long names differ only past the cut.
func TestGeneratedName(t *testing.T) {
	if got := generatedName("bob", "AdministratorAccess"); got != "warden-bob-AdministratorAccess" {
		t.Errorf("short name: %s", got)
	}
	odd := generatedName("a b/c", "PowerUserAccess")
	if strings.ContainsAny(odd, " /") || !strings.HasPrefix(odd, "warden-a-b-c-PowerUserAccess-") {
		t.Errorf("sanitized name: %s", odd)
	}
	long1 := generatedName(strings.Repeat("x", 64)+"1", strings.Repeat("P", 70))
	long2 := generatedName(strings.Repeat("x", 64)+"2", strings.Repeat("P", 70))
	if len(long1) != 128 || len(long2) != 128 || long1 == long2 {
		t.Errorf("long names %q (%d), %q (%d): want 128 characters each, distinct", long1, len(long1), long2, len(long2))
	}
}

// Usage that cannot speak for the window is not applicable, with the reason: the fixes
// must not read "nothing unused" into it.
func TestJudgedUsage_failsClosed(t *testing.T) {
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	good := func() map[string]any { return usagetest.Attr(asOf, "s3=2026-11-24", "kms=") }
	old := principalAge{what: "role app", created: "2024-01-10T09:00:00Z"}
	tests := []struct {
		name       string
		u          map[string]any
		principals []principalAge
		want       string // "" : judged
	}{
		{"complete data, old principals", good(), []principalAge{old, {what: "group g", group: true}}, ""},
		{"no data", nil, nil, "no usage data"},
		{"incomplete", func() map[string]any { u := good(); u["complete"], u["error"] = false, "page 2 failed"; return u }(), nil, "page 2 failed"},
		{"tracking within the window", func() map[string]any {
			u := good()
			u["tracked_since"] = "2026-10-01T00:00:00Z"
			return u
		}(), nil, "within the 90-day window"},
		{"a principal younger than the window", good(), []principalAge{old, {what: "user new", created: "2026-11-01T00:00:00Z"}}, "user new was created on 2026-11-01"},
		{"a user of unknown age", good(), []principalAge{{what: "user x"}}, "no creation time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := judgedUsage(tt.u, 90, tt.principals)
			if tt.want == "" {
				if err != nil || !g.Services["kms"] {
					t.Errorf("judgedUsage: %v, %v; want kms unused", g.Services, err)
				}
				return
			}
			if !errors.Is(err, remediators.ErrNotApplicable) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("judgedUsage: %v, want not applicable saying %q", err, tt.want)
			}
		})
	}
}
