package aws

import (
	"encoding/json"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
)

// trustPolicies returns the trust policies of the acme fixture's roles as JSON texts, and
// the principals they name.
func trustPolicies(tb testing.TB) (docs, principals []string) {
	tb.Helper()
	f, err := os.Open("../../fixtures/acme/snapshot.json")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	_, resources, err := snapshot.ReadAll(f, "acme")
	if err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range resources {
		doc, ok := r.Attributes["assume_role_policy"].(map[string]any)
		if !ok {
			continue
		}
		text, _ := json.Marshal(doc)
		docs = append(docs, string(text))
		for _, s := range statements(doc) {
			p, _ := s["Principal"].(map[string]any)
			for _, v := range p {
				for _, x := range asList(v) {
					if x, ok := x.(string); ok && !seen[x] {
						seen[x] = true
						principals = append(principals, x)
					}
				}
			}
		}
	}
	if len(docs) == 0 {
		tb.Fatal("the acme snapshot holds no trust policy")
	}
	return docs, principals
}

func statements(doc map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range asList(doc["Statement"]) {
		if s, ok := e.(map[string]any); ok {
			out = append(out, s)
		}
	}
	return out
}

func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// trusts reports whether statement s lets principal assume the role with no condition:
// what withoutPrincipal must leave in no statement.
func trusts(s map[string]any, principal string) bool {
	if s["Effect"] != "Allow" || len(attr.Map(s, "Condition")) > 0 {
		return false
	}
	if _, ok := s["NotPrincipal"]; ok {
		return principal == "*"
	}
	switch p := s["Principal"].(type) {
	case string:
		return p == principal
	case map[string]any:
		for _, v := range p {
			for _, x := range asList(v) {
				if x == principal {
					return true
				}
			}
		}
	}
	return false
}

// iamEscape percent-encodes every byte but the unreserved characters, as IAM encodes
// the documents GetRole returns.
func iamEscape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// FuzzTrustPolicyEdit: whatever trust policy a role has and whatever principal a policy
// names, the edit never panics, never modifies the document it was given, leaves no
// unconditional Allow trusting the principal, keeps every Deny and conditional statement,
// is idempotent, and Targets plans a fix exactly when there is something to take out,
// with a before-state holding the document as it was. The document as GetRole returns it
// (URL-encoded) decodes back to the same text.
func FuzzTrustPolicyEdit(f *testing.F) {
	docs, principals := trustPolicies(f)
	principals = append(principals, "*", "token.actions.githubusercontent.com", "")
	for i, d := range docs {
		f.Add(d, principals[i%len(principals)])
		f.Add(d, "*")
	}
	f.Add(`{"Statement":{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}}`, "*")
	f.Add(`{"Statement":[{"Effect":"Allow","NotPrincipal":{"AWS":"arn:aws:iam::1:root"}},{"Effect":"Deny","Principal":"*"}]}`, "*")
	f.Add(`{"Statement":[{"Effect":"Allow","Principal":{"Federated":["a","b","a"]},"Condition":{}}]}`, "a")
	f.Add(`{"Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-1"}}}]}`, "*")
	f.Add(`{"Statement":5}`, "*")
	f.Fuzz(func(t *testing.T, text, principal string) {
		if dec, err := decodeDocument(iamEscape(text)); err != nil || dec != text {
			t.Fatalf("decodeDocument(IAM encoding of %q) = %q, %v", text, dec, err)
		}
		var doc, orig map[string]any
		if json.Unmarshal([]byte(text), &doc) != nil || json.Unmarshal([]byte(text), &orig) != nil || doc == nil {
			return
		}
		out, changed := withoutPrincipal(doc, principal)
		if !reflect.DeepEqual(doc, orig) {
			t.Fatalf("withoutPrincipal modified its input %s", text)
		}
		if !changed {
			if !reflect.DeepEqual(out, doc) {
				t.Fatalf("unchanged, but returned %v for %s", out, text)
			}
			for _, s := range statements(doc) {
				if trusts(s, principal) {
					t.Fatalf("reported nothing to change, but %v trusts %q", s, principal)
				}
			}
		} else {
			if _, err := json.Marshal(out); err != nil {
				t.Fatalf("edited policy does not encode: %v", err)
			}
			var kept, was int
			for _, s := range statements(out) {
				if trusts(s, principal) {
					t.Fatalf("statement %v still trusts %q", s, principal)
				}
				if s["Effect"] != "Allow" || len(attr.Map(s, "Condition")) > 0 {
					kept++
				}
			}
			for _, s := range statements(doc) {
				if s["Effect"] != "Allow" || len(attr.Map(s, "Condition")) > 0 {
					was++
				}
			}
			if kept != was {
				t.Fatalf("%d Deny or conditional statements became %d: %s → %v", was, kept, text, out)
			}
			if again, ch := withoutPrincipal(out, principal); ch || !reflect.DeepEqual(again, out) {
				t.Fatalf("second edit changed %v again", out)
			}
		}
		res := snapshot.Resource{UID: "arn:aws:iam::111111111111:role/fuzz", Type: "aws.iam.role",
			Attributes: map[string]any{"assume_role_policy": doc}}
		targets, err := (&UpdateTrustPolicy{}).Targets(res, map[string]any{"principal": principal})
		if err != nil {
			return
		}
		if len(targets) != map[bool]int{true: 1}[changed] {
			t.Fatalf("Targets planned %d fixes; the edit changed: %v", len(targets), changed)
		}
		for _, tg := range targets {
			var b trustBefore
			if err := attr.Decode(tg.Before, &b); err != nil || b.Principal != principal || b.Role == "" || tg.Part != "trust/"+principal {
				t.Fatalf("target %+v: before-state %+v (%v)", tg, b, err)
			}
			var stored map[string]any
			if err := json.Unmarshal(b.Document, &stored); err != nil || !reflect.DeepEqual(stored, orig) {
				t.Fatalf("before-state holds %s, not the document %s (%v)", b.Document, text, err)
			}
		}
	})
}
