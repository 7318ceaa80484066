package aws

import (
	"encoding/json"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
)

// policyDocuments returns the IAM policy documents (trust policies, inline and managed
// policy versions) of the acme fixture snapshot, as JSON texts.
func policyDocuments(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile("../../fixtures/acme/snapshot.json")
	if err != nil {
		tb.Fatal(err)
	}
	var snap any
	if err := json.Unmarshal(b, &snap); err != nil {
		tb.Fatal(err)
	}
	var docs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if _, ok := v["Statement"]; ok {
				b, _ := json.Marshal(v)
				docs = append(docs, string(b))
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(snap)
	if len(docs) == 0 {
		tb.Fatal("the acme snapshot holds no policy document")
	}
	return docs
}

// rfc3986Escape percent-encodes every byte but the unreserved characters, as IAM
// encodes the policy documents it returns.
func rfc3986Escape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// FuzzPolicyDocument: document, which decodes the URL-encoded policy documents of
// GetAccountAuthorizationDetails, GetRole and GetPolicyVersion, never panics; a JSON
// document IAM encodes comes back as the same value; one already decoded (no '%' or
// '+' to misread) comes back as itself; anything else is kept as text, never lost.
func FuzzPolicyDocument(f *testing.F) {
	for _, d := range policyDocuments(f) {
		f.Add(d)
		f.Add(rfc3986Escape(d))
	}
	for _, s := range []string{"", "%", "%zz", "+", "null", `"%41"`, `{"Statement":"a+b"}`, "%7B%22Version%22%3A%222012-10-17%22%7D", "not json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := document(&s)
		if _, err := json.Marshal(got); err != nil {
			t.Fatalf("document(%q) = %#v, which does not encode: %v", s, got, err)
		}
		var want any
		if err := json.Unmarshal([]byte(s), &want); err == nil {
			enc := rfc3986Escape(s)
			if back := document(&enc); !reflect.DeepEqual(back, want) {
				t.Fatalf("document of the IAM encoding of %q = %#v, want %#v", s, back, want)
			}
			if !strings.ContainsAny(s, "%+") && !reflect.DeepEqual(got, want) {
				t.Fatalf("document(%q) = %#v, want the value itself %#v", s, got, want)
			}
			return
		}
		if text, ok := got.(string); ok {
			// Not JSON as given: kept as the text given, as its decoding, or as the JSON
			// string its decoding is ("000%22 → "000"), never lost.
			dec, err := url.QueryUnescape(s)
			var decoded any
			if text != s && (err != nil || (text != dec && (json.Unmarshal([]byte(dec), &decoded) != nil || decoded != text))) {
				t.Fatalf("document(%q) kept %q, which is neither the input nor its decoding", s, text)
			}
		}
	})
}
