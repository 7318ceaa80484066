package yamlerr_test

import (
	"testing"

	"github.com/warden-sec/warden/internal/yamlerr"
)

// The error reads as the field's path from the top of the file, with its line when it
// has one; a section that names its fields from the top itself gives no prefix.
func TestError(t *testing.T) {
	tests := []struct {
		err          yamlerr.Error
		want, detail string
	}{
		{yamlerr.Error{Section: "gates", Line: 4, Field: "quorum.critical", Msg: "want a number"},
			"line 4: gates.quorum.critical: want a number", "gates.quorum.critical: want a number"},
		{yamlerr.Error{Section: "certs", Msg: "empty"}, "certs: empty", "certs: empty"},
		{yamlerr.Error{Line: 9, Field: "identities.alice.slack", Msg: "missing"},
			"line 9: identities.alice.slack: missing", "identities.alice.slack: missing"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.err.Detail(); got != tc.detail {
			t.Errorf("Detail() = %q, want %q", got, tc.detail)
		}
	}
}

// Join gives nil, the one error itself, or all of them; Errors lists them back; Merge
// leaves out what judging says about a field that could not be read.
func TestJoinMergeErrors(t *testing.T) {
	a := &yamlerr.Error{Section: "gates", Line: 2, Field: "auto[0]", Msg: "unknown risk"}
	b := &yamlerr.Error{Section: "gates", Line: 3, Field: "auto[1]", Msg: "unknown risk"}
	if err := yamlerr.Join(nil); err != nil {
		t.Errorf("Join(nil) = %v", err)
	}
	if err := yamlerr.Join([]*yamlerr.Error{a}); err != a {
		t.Errorf("Join of one = %#v, want the error itself", err)
	}
	joined := yamlerr.Join([]*yamlerr.Error{a, b})
	if got := yamlerr.Errors(joined); len(got) != 2 || got[0] != a || got[1] != b {
		t.Errorf("Errors(Join(a, b)) = %v", got)
	}
	if got := joined.Error(); got != a.Error()+"\n"+b.Error() {
		t.Errorf("Join(a, b) reads %q", got)
	}
	judged := []*yamlerr.Error{
		{Section: "gates", Field: "auto[1]", Msg: "listed twice"},  // b's field: left out
		{Section: "gates", Field: "auto", Msg: "whole list"},       // contains a's: left out
		{Section: "gates", Field: "approvers[0]", Msg: "empty"},    // kept
		{Section: "certs", Field: "auto[0]", Msg: "other section"}, // kept
		{Section: "gates", Field: "auto[10]", Msg: "another item"}, // kept: not auto[1]
	}
	got := yamlerr.Merge([]*yamlerr.Error{a, b}, judged)
	if len(got) != 5 || got[0] != a || got[1] != b || got[2] != judged[2] || got[3] != judged[3] || got[4] != judged[4] {
		t.Errorf("Merge = %v", got)
	}
}
