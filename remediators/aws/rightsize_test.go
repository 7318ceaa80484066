package aws

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// usageOf is a usage attribute as of 2026-12-01 with tracking since 400 days before,
// from "svc=last_used" (empty: never) and "svc:Action=last_used" entries.
func usageOf(t *testing.T, entries ...string) map[string]any {
	t.Helper()
	asOf := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	services := map[string]map[string]any{}
	var order []string
	for _, e := range entries {
		name, at, _ := strings.Cut(e, "=")
		var last any
		if at != "" {
			last = at + "T00:00:00Z"
		}
		svc, action, isAction := strings.Cut(name, ":")
		s := services[svc]
		if s == nil {
			s = map[string]any{"service": svc, "name": svc, "last_used": nil}
			services[svc] = s
			order = append(order, svc)
		}
		if isAction {
			s["actions"] = append(toList(s["actions"]), map[string]any{"action": svc + ":" + action, "last_used": last})
		} else {
			s["last_used"] = last
		}
	}
	var list []any
	for _, svc := range order {
		list = append(list, services[svc])
	}
	return map[string]any{"source": "aws.access_advisor", "granularity": "action", "complete": true, "error": "",
		"as_of": asOf.Format(time.RFC3339), "tracked_since": asOf.Add(-400 * 24 * time.Hour).Format(time.RFC3339), "services": list}
}

func toList(v any) []any {
	l, _ := v.([]any)
	return l
}

func doc(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRightsize(t *testing.T) {
	window := 90 * 24 * time.Hour
	// s3 used last week, kms never, lambda 300 days ago; within s3, PutBucketPolicy never.
	usage := func(t *testing.T) map[string]any {
		return usageOf(t, "s3=2026-11-24", "s3:GetBucketPolicy=2026-11-24", "s3:PutBucketPolicy=", "kms=", "lambda=2026-02-04", "ec2=2026-11-30")
	}
	tests := []struct {
		name, in, want string // want "" : unchanged; "null": nothing left
		removed        []string
	}{
		{"an unused service's patterns go, the rest stays",
			`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:Get*","kms:Decrypt","lambda:*"],"Resource":"*"}]}`,
			`{"Statement":[{"Action":["s3:Get*"],"Effect":"Allow","Resource":"*"}],"Version":"2012-10-17"}`,
			[]string{"kms:Decrypt", "lambda:*"}},
		{"a literal action reported unused goes; a wildcard of a used service stays",
			`{"Statement":[{"Effect":"Allow","Action":["s3:PutBucketPolicy","s3:Put*"],"Resource":"arn:aws:s3:::b"}]}`,
			`{"Statement":[{"Action":["s3:Put*"],"Effect":"Allow","Resource":"arn:aws:s3:::b"}]}`,
			[]string{"s3:PutBucketPolicy"}},
		{"Deny, NotAction and conditions stay as they were",
			`{"Statement":[{"Effect":"Deny","Action":"kms:*","Resource":"*"},{"Effect":"Allow","NotAction":"kms:*","Resource":"*"},{"Effect":"Allow","Action":"kms:Decrypt","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"true"}}},{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}`,
			`{"Statement":[{"Action":"kms:*","Effect":"Deny","Resource":"*"},{"Effect":"Allow","NotAction":"kms:*","Resource":"*"},{"Action":"ec2:Describe*","Effect":"Allow","Resource":"*"}]}`,
			[]string{"kms:Decrypt"}},
		{"* becomes the used services",
			`{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`,
			`{"Statement":{"Action":["ec2:*","s3:*"],"Effect":"Allow","Resource":"*"}}`,
			[]string{"*"}},
		{"a policy of unused services only is deleted",
			`{"Statement":[{"Effect":"Allow","Action":["kms:*","lambda:InvokeFunction"],"Resource":"*"}]}`, "null",
			[]string{"kms:*", "lambda:InvokeFunction"}},
		{"a wildcard in the service part is not judged",
			`{"Statement":[{"Effect":"Allow","Action":"k*:Decrypt","Resource":"*"}]}`, "", nil},
		{"nothing unused: unchanged",
			`{"Statement":[{"Effect":"Allow","Action":["s3:GetBucketPolicy","ec2:Describe*"],"Resource":"*"}]}`, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := unusedFrom(usage(t), window)
			if err != nil {
				t.Fatal(err)
			}
			old := doc(t, tt.in)
			r := rightsize(old, u)
			if !slices.Equal(r.removed, tt.removed) {
				t.Errorf("removed %q, want %q", r.removed, tt.removed)
			}
			if tt.want == "" {
				if r.changed {
					t.Errorf("changed: %v", r.doc)
				}
				return
			}
			got, _ := json.Marshal(r.doc)
			if string(got) != tt.want {
				t.Errorf("new document\n got %s\nwant %s", got, tt.want)
			}
			if err := subsetOf(r.doc, doc(t, tt.in)); err != nil {
				t.Errorf("not a subset of the old: %v", err)
			}
			if in, _ := json.Marshal(doc(t, tt.in)); string(in) != mustJSON(t, old) {
				t.Error("the old document was changed in place")
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Data the cloud cannot speak for counts as used: incomplete data, tracking younger than
// the window, no data, and a date that does not parse remove nothing.
func TestUnusedFrom_failsClosed(t *testing.T) {
	window := 90 * 24 * time.Hour
	incomplete := usageOf(t, "kms=")
	incomplete["complete"], incomplete["error"] = false, "iam:GetServiceLastAccessedDetails: throttled"
	young := usageOf(t, "kms=")
	young["tracked_since"] = "2026-10-01T00:00:00Z"
	odd := usageOf(t, "kms=yesterday")
	for name, u := range map[string]map[string]any{"incomplete": incomplete, "tracking younger than the window": young, "no data": nil, "a date that does not parse": odd} {
		got, err := unusedFrom(u, window)
		if !got.empty() {
			t.Errorf("%s: unused %v %v", name, got.services, got.actions)
		}
		if (name == "incomplete" || name == "no data") && err == nil {
			t.Errorf("%s: no error to say why nothing can be concluded", name)
		}
	}
	u, err := unusedFrom(usageOf(t, "kms=", "s3=2026-11-30"), window)
	if err != nil || !u.services["kms"] || u.services["s3"] || !strings.Contains(u.evidence["kms"], "never used since tracking began on 2025-10-27") {
		t.Errorf("kms never used, s3 used: %+v %v", u, err)
	}
}

// subsetOf refuses a document that grants what the old did not.
func TestSubsetOf_refusesAWiderDocument(t *testing.T) {
	old := doc(t, `{"Statement":[{"Effect":"Allow","Action":["s3:Get*"],"Resource":"arn:aws:s3:::b"}]}`)
	for name, wider := range map[string]string{
		"another action":   `{"Statement":[{"Effect":"Allow","Action":["s3:Put*"],"Resource":"arn:aws:s3:::b"}]}`,
		"another resource": `{"Statement":[{"Effect":"Allow","Action":["s3:Get*"],"Resource":"*"}]}`,
		"a new statement":  `{"Statement":[{"Effect":"Allow","Action":["s3:Get*"],"Resource":"arn:aws:s3:::b"},{"Effect":"Allow","Action":"iam:*","Resource":"*"}]}`,
	} {
		if err := subsetOf(doc(t, wider), old); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzRightsize: whatever document IAM holds, right-sizing never panics, and what it
// writes allows a subset of the old document.
func FuzzRightsize(f *testing.F) {
	for _, s := range []string{
		`{"Statement":[{"Effect":"Allow","Action":["s3:Get*","kms:Decrypt","*"],"Resource":"*"}]}`,
		`{"Statement":{"Effect":"Allow","Action":"lambda:*","Resource":["a","b"],"Condition":{"x":{"y":"z"}}}}`,
		`{"Statement":[{"Effect":"Deny","NotAction":"kms:*"},"text",null,{"Effect":"Allow","Action":[1,"kms:x"]}]}`,
		`{"Statement":[]}`, `{}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var old map[string]any
		if json.Unmarshal([]byte(s), &old) != nil || old == nil {
			return
		}
		u, err := unusedFrom(usageOf(t, "s3=2026-11-24", "s3:PutBucketPolicy=", "kms=", "lambda=2026-02-04"), 90*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		r := rightsize(old, u)
		if r.changed {
			if err := subsetOf(r.doc, old); err != nil {
				t.Errorf("%s → %v: %v", s, r.doc, err)
			}
		}
	})
}
