package evidence_test

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/compliance/evidence"
)

func TestParseAt(t *testing.T) {
	now := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-30T12:00:00Z", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)},
		{"2026-11-30T13:00:00+01:00", time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)},
		{"2026-11-30T12:00:00.5Z", time.Date(2026, 11, 30, 12, 0, 0, 5e8, time.UTC)},
		// A date is the end of that day, in UTC; today's end is not yet: now.
		{"2026-11-30", time.Date(2026, 11, 30, 23, 59, 59, 999999999, time.UTC)},
		{"2026-12-03", now},
		// A day to come stays what it says, for the report to refuse.
		{"2026-12-04", time.Date(2026, 12, 4, 23, 59, 59, 999999999, time.UTC)},
	} {
		got, err := evidence.ParseAt(c.in, now)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("ParseAt(%q) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "now", "72h", "2026-11-30 12:00", "2026-02-30"} {
		if _, err := evidence.ParseAt(bad, now); err == nil {
			t.Errorf("ParseAt(%q) accepted", bad)
		}
	}
}
