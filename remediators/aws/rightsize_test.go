package aws

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/usage"
	"github.com/warden-sec/warden/internal/usage/usagetest"
)

// usageOf is a usage attribute as of 2026-12-01 (usagetest.Attr).
func usageOf(t *testing.T, entries ...string) map[string]any {
	t.Helper()
	return usagetest.Attr(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), entries...)
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
	attrs := func(t *testing.T) map[string]any {
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
			u, err := usage.Unused(attrs(t), window)
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

// With Access Analyzer's data (listed "unused") the services used are unknown: "*" stays
// as it was, while the patterns of a service found unused still go.
func TestRightsize_analyzerLeavesStarUntouched(t *testing.T) {
	u, err := usage.Unused(usagetest.Analyzer(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), 90, "kms=", "lambda=2026-02-04"), 90*24*time.Hour)
	if err != nil || !u.Services["kms"] || u.AllGranted {
		t.Fatalf("analyzer usage: %+v %v", u, err)
	}
	star := doc(t, `{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}`)
	if r := rightsize(star, u); r.changed || len(r.removed) != 0 {
		t.Errorf(`"*" narrowed from analyzer data: %v removed %q`, r.doc, r.removed)
	}
	mixed := doc(t, `{"Statement":[{"Effect":"Allow","Action":["*","kms:Decrypt"],"Resource":"*"}]}`)
	r := rightsize(mixed, u)
	if got := mustJSON(t, r.doc); got != `{"Statement":[{"Action":["*"],"Effect":"Allow","Resource":"*"}]}` || !slices.Equal(r.removed, []string{"kms:Decrypt"}) {
		t.Errorf("got %s removed %q", got, r.removed)
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
		u, err := usage.Unused(usageOf(t, "s3=2026-11-24", "s3:PutBucketPolicy=", "kms=", "lambda=2026-02-04"), 90*24*time.Hour)
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
