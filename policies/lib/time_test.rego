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

# --- bounds: one comparison instead of whole days ----------------------------

stamps := [
	"2026-05-01T00:00:00Z", "2026-05-01T00:00:00.000000001Z", "2026-04-30T23:59:59Z",
	"2026-05-31T12:00:00Z", "2026-06-01T00:00:00Z", "2026-06-30T23:59:59Z",
	"2026-07-01T00:00:00Z", "2026-07-01T00:00:00.5Z", "2025-06-01T00:00:00+02:00",
	"2026-06-01T01:00:00+01:00", "", "not a time", null,
]

thresholds := [0, 1, 30, 29.5, 30.5, -1, -0.5, 1e2, null, true, false, "30", [30], {"d": 30}]

older_than_agrees if {
	every ts in stamps {
		every d in thresholds {
			count({1 | wtime.older_than(ts, d)}) == count({1 | wtime.days_since(ts) > d})
		}
	}
}

within_days_agrees if {
	every ts in stamps {
		every d in thresholds {
			count({1 | wtime.within_days(ts, d)}) == count({1 | wtime.days_until(ts) < d})
		}
	}
}

test_older_than_is_days_since_greater_than if {
	older_than_agrees with time.now_ns as now
}

test_within_days_is_days_until_less_than if {
	within_days_agrees with time.now_ns as now
}

test_older_than_bound_is_the_last_old_instant if {
	# 31 whole days before 2026-06-01T00:00:00Z
	wtime.older_than_bound(30) == time.parse_rfc3339_ns("2026-05-01T00:00:00Z") with time.now_ns as now
	wtime.older_than_bound(30.5) == time.parse_rfc3339_ns("2026-05-01T00:00:00Z") with time.now_ns as now
	wtime.older_than("2026-05-01T00:00:00Z", 30) with time.now_ns as now
	not wtime.older_than("2026-05-01T00:00:00.000000001Z", 30) with time.now_ns as now
}

test_within_bound_is_the_first_far_instant if {
	wtime.within_bound(30) == time.parse_rfc3339_ns("2026-07-01T00:00:00Z") with time.now_ns as now
	wtime.within_bound(29.5) == time.parse_rfc3339_ns("2026-07-01T00:00:00Z") with time.now_ns as now
	wtime.within_days("2026-06-30T23:59:59.999999999Z", 30) with time.now_ns as now
	not wtime.within_days("2026-07-01T00:00:00Z", 30) with time.now_ns as now
}

test_instant if {
	wtime.instant("2026-06-01T00:00:00Z") == now
	not wtime.instant("")
	not wtime.instant(null)
}

test_far_future_means_never if {
	every ts in ["9999-12-31T23:59:59Z", "2262-04-12T00:00:00Z", "3000-01-01T00:00:00Z"] {
		wtime.far_future(ts)
		not wtime.instant(ts)
		not wtime.older_than(ts, 30) with time.now_ns as now
	}
	every ts in ["2261-12-31T23:59:59Z", "2026-06-01T00:00:00Z", "0001-01-01T00:00:00Z"] {
		not wtime.far_future(ts)
	}
}
