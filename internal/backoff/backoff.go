// Package backoff is the one retry delay warden uses against every cloud: exponential
// backoff with full jitter, after "Exponential Backoff And Jitter" (AWS Architecture Blog,
// 2015). Clients throttled together spread out over the whole window instead of retrying
// in step, which is what keeps a throttling storm from feeding itself. An endpoint that
// cannot be reached at all (Unreachable) is not waited out: it is reported.
package backoff

import (
	"math/rand/v2"
	"time"
)

// FullJitter is the delay before retry number attempt (1 = the first retry): uniform in
// [0, min(max, base·2^(attempt-1))]. An attempt below 1 is taken as 1; a max below base
// caps the window at max; non-positive bounds give no delay.
func FullJitter(base, max time.Duration, attempt int) time.Duration {
	w := Window(base, max, attempt)
	if w <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(w) + 1))
}

// Window is the upper bound FullJitter draws from for attempt: min(max, base·2^(attempt-1)),
// without overflowing however large attempt grows.
func Window(base, max time.Duration, attempt int) time.Duration {
	if base <= 0 || max <= 0 {
		return 0
	}
	d := base
	for i := 1; i < attempt && d < max; i++ {
		if d > max/2 {
			return max // doubling would pass max (or overflow)
		}
		d *= 2
	}
	return min(d, max)
}
