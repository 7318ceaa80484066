package evidence

import (
	"fmt"
	"time"
)

// ParseAt reads a report's time as people give it (warden report --at): an RFC 3339 time, or a date meaning the end of that day in UTC (so
// that --at 2026-11-30 includes the scans of the 30th), or now when the day is not over.
func ParseAt(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		end := d.AddDate(0, 0, 1).Add(-time.Nanosecond)
		if end.After(now) && !d.After(now) {
			return now, nil
		}
		return end, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time (2026-11-30T12:00:00Z) nor a date (2026-11-30)", s)
}
