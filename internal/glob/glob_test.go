package glob_test

import (
	"testing"

	"github.com/warden-sec/warden/internal/glob"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want, fold bool
	}{
		{"*", "", true, true},
		{"*", "anything:at/all", true, true},
		{"s3:Get*", "s3:GetObject", true, true},
		{"s3:Get*", "s3:getobject", false, true},
		{"s3:Get*", "s3:PutObject", false, false},
		{"iam:?etRole", "iam:GetRole", true, true},
		{"iam:?etRole", "iam:etRole", false, false},
		{"arn:aws:iam::*:role/*", "arn:aws:iam::111111111111:role/app/deploy", true, true},
		{"*/*", "arn:aws:s3:::data", false, false},
		{"a*b*c", "aXXbYYc", true, true},
		{"a*b*c", "aXXbYY", false, false},
		{"", "", true, true},
		{"", "x", false, false},
		{"**", "x", true, true},
		// A star in the pattern is a wildcard even against a star in s.
		{"*?", "*", true, true},
		{"*b", "*ab", true, true},
		// Service namespaces, as the managed-policy fixes match them.
		{"*", "s3", true, true}, {"s3", "s3", true, true}, {"s?", "s3", true, true}, {"s*3", "s3", true, true},
		{"s", "s3", false, false}, {"s3?", "s3", false, false}, {"*x*", "sqs", false, false}, {"a*b*c", "aXbYc", true, true},
	} {
		if got := glob.Match(tc.pattern, tc.s); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
		if got := glob.MatchFold(tc.pattern, tc.s); got != tc.fold {
			t.Errorf("MatchFold(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.fold)
		}
	}
}

func FuzzMatch(f *testing.F) {
	f.Add("s3:*", "s3:GetObject")
	f.Add("a*?b", "axyb")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		// Every string matches itself: a literal byte matches itself, * and ? match
		// themselves among others.
		if !glob.Match(s, s) {
			t.Fatalf("%q does not match itself", s)
		}
		// A star before or after matches more, never less.
		if glob.Match(pattern, s) && (!glob.Match("*"+pattern, s) || !glob.Match(pattern+"*", s)) {
			t.Fatalf("%q matches %q but a star added to it does not", pattern, s)
		}
	})
}
