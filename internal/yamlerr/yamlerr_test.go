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
