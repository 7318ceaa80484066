package dashboard_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/dashboard"
)

func TestWriteTokens_escapesNamesAndDashesWhatNeverHappened(t *testing.T) {
	var b strings.Builder
	if err := dashboard.WriteTokens(&b, nil); err != nil || b.String() != "no tokens\n" {
		t.Errorf("no tokens: %q, %v", b.String(), err)
	}
	b.Reset()
	at := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	dashboard.WriteTokens(&b, []dashboard.Token{{ID: "tok-1", Name: "carol\x1b]0;x\a", RoleName: "approver", CreatedAt: at, CreatedBy: "alice"}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || strings.Contains(b.String(), "\x1b") {
		t.Fatalf("want a header and one escaped row:\n%q", b.String())
	}
	if f := strings.Fields(lines[1]); len(f) != 7 || f[3] != "2026-12-06T12:00:00Z" || f[5] != "-" || f[6] != "-" {
		t.Errorf("row %q: want created at 12:00 and - for never used, never revoked", lines[1])
	}
}
