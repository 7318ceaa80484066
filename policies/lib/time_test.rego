package warden.lib.time_test

import data.warden.lib.time as wtime

# 2026-06-01T00:00:00Z
now := 1780272000000000000

test_days_since if {
	wtime.days_since("2026-05-01T00:00:00Z") == 31 with time.now_ns as now
}

test_days_since_undefined_for_null if {
	not wtime.days_since(null) with time.now_ns as now
}

test_days_until_negative_when_past if {
	wtime.days_until("2026-05-31T00:00:00Z") == -1 with time.now_ns as now
}

test_older_than if {
	wtime.older_than("2026-01-01T00:00:00Z", 90) with time.now_ns as now
	not wtime.older_than("2026-05-01T00:00:00Z", 90) with time.now_ns as now
}

test_days_until_first_day_after_is_minus_one if {
	wtime.days_until("2026-05-31T12:00:00Z") == -1 with time.now_ns as now
}
