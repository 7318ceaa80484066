package audit

import (
	"bytes"
	"testing"
)

// TestCanonicalStrings_sameBytesAsTheRoundTrip checks the shortcut for objects of
// strings against the encoding/json round trip it replaces, on the strings that
// encoding/json escapes or rewrites; data of any other shape is not taken.
func TestCanonicalStrings_sameBytesAsTheRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name        string
		data        any
		correlation string
		taken       bool
	}{
		{"finding", map[string]any{"scope": "aws/111122223333/iam", "policy": "aws.iam.root_access_key", "severity": "critical",
			"resource": "arn:aws:iam::111122223333:root", "account": "111122223333", "region": "", "message": "root has an access key"}, "", true},
		{"with correlation", map[string]any{"policy": "p", "resource": "r"}, "sweep-7", true},
		{"names its own correlation", map[string]any{"correlation": "mine", "zz": "a"}, "sweep-7", true},
		{"empty", map[string]any{}, "c", true},
		{"empty without correlation", map[string]any{}, "", true},
		{"escapes", map[string]any{"m": "<a href=\"x\">&\\\n\t\r\b\f\x01\x1f\u2028\u2029 é 漢 🙂", "k\"ey<": "v"}, "c<&>", true},
		{"key order by bytes", map[string]any{"b": "1", "B": "2", "a_": "3", "a": "4", "é": "5", "z": "6"}, "", true},
		{"invalid UTF-8 value", map[string]any{"m": "a\xffb"}, "", false},
		{"invalid UTF-8 key", map[string]any{"a\xffb": "m"}, "", false},
		{"a number", map[string]any{"attempts": 3, "m": "x"}, "", false},
		{"nested", map[string]any{"m": map[string]any{"a": "b"}}, "c", false},
		{"nil map", map[string]any(nil), "c", false},
		{"strings map type", map[string]string{"a": "b"}, "c", false},
		{"nil", nil, "c", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := canonicalRoundTrip(c.data, c.correlation)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := canonicalStrings(c.data, c.correlation)
			if ok != c.taken {
				t.Fatalf("taken %v, want %v", ok, c.taken)
			}
			if ok && !bytes.Equal(got, want) {
				t.Errorf("got  %s\nwant %s", got, want)
			}
			all, err := canonicalDataWith(c.data, c.correlation)
			if err != nil || !bytes.Equal(all, want) {
				t.Errorf("canonicalDataWith: %s, %v; want %s", all, err, want)
			}
		})
	}
}

// FuzzCanonicalStrings checks the shortcut against the round trip on any two-key
// object of strings and any correlation id.
func FuzzCanonicalStrings(f *testing.F) {
	f.Add("policy", "aws.iam.mfa", "message", "<b>&\"\\\n", "sweep-1")
	f.Add("correlation", "x", "\xff", "y", "")
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2, correlation string) {
		data := map[string]any{k1: v1, k2: v2}
		want, err := canonicalRoundTrip(data, correlation)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := canonicalStrings(data, correlation)
		if ok && !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
