# METADATA
# title: Time helpers
# description: Ages and deadlines measured from time.now_ns(), which warden sets to the snapshot's collection time.
package warden.lib.time

# Performance: nanosecond instants have 19 digits, beyond what OPA computes with machine
# integers, so every subtraction or division of two instants goes through math/big. The
# predicates below therefore compare the parsed time with a cutoff instant (an integer
# comparison), and the cutoff — which depends only on now and the threshold — is computed
# once per evaluation (a function of a small argument is cached for the whole query). Whole
# days (days_since, days_until) are for messages: compute them only for a violation.

ns_per_day := 86400000000000

# instant(ts) is the RFC 3339 time ts in nanoseconds since the epoch.
# It is undefined when ts is null, empty, far_future or not a time (an error under strict
# builtin errors, which warden records: a time it cannot read is not judged silently).
instant(ts) := time.parse_rfc3339_ns(ts) if {
	is_string(ts)
	ts != ""
	not far_future(ts)
}

# far_future(ts) holds for an RFC 3339 time in the year 2262 or later, beyond what
# nanoseconds since the epoch can hold (time.parse_rfc3339_ns fails on it). Such times
# mean "never": GCP writes the valid_before of a key without expiry as
# 9999-12-31T23:59:59Z, and RFC 5280 a certificate without expiry as 9999-12-31.
far_future(ts) if regex.match(`^(226[2-9]|22[7-9][0-9]|2[3-9][0-9]{2}|[3-9][0-9]{3})-`, ts)

# days_since(ts) is the number of whole days from the RFC 3339 time ts to now.
# It is undefined when ts is null, empty or not a time.
days_since(ts) := floor_days(time.now_ns() - instant(ts))

# days_until(ts) is the number of whole days from now to the RFC 3339 time ts (negative once passed).
days_until(ts) := floor_days(instant(ts) - time.now_ns())

# older_than(ts, days) holds when ts is more than days whole days ago (days_since(ts) > days).
older_than(ts, days) if instant(ts) <= older_than_bound(days)

# older_than_bound(days) is the bound b for which older_than(ts, days) holds exactly when
# instant(ts) <= b: the latest instant more than days whole days before now (whole days
# since > days ⟺ elapsed >= floor(days) + 1 days). A policy computes it once, as a rule
# without arguments, and compares each parsed time with it:
#
#	cutoff := wtime.older_than_bound(max_days)
#	...
#	time.parse_rfc3339_ns(ts) <= cutoff
#
# For a whole number of days it is time.add_date's (Go's time arithmetic: no big numbers);
# otherwise it is computed, and for a threshold that is not a number b keeps the meaning of
# days_since(ts) > days under Rego's ordering of types (null < booleans < numbers <
# strings < …): "" (above every number) for null or a boolean, null (below every number)
# for anything else.
older_than_bound(days) := b if {
	b := time.add_date(time.now_ns(), 0, 0, -1 - days)
} else := time.now_ns() - ((round_down(days) + 1) * ns_per_day) if {
	is_number(days)
} else := "" if {
	days in {null, true, false}
} else := null

# within_days(ts, days) holds when fewer than days whole days are left until ts
# (days_until(ts) < days); it also holds once ts has passed.
within_days(ts, days) if instant(ts) < within_bound(days)

# within_bound(days) is the bound b for which within_days(ts, days) holds exactly when
# instant(ts) < b: now plus ceil(days) whole days (whole days until < days ⟺ remaining
# < ceil(days) days). As with older_than_bound, a whole number of days uses time.add_date,
# and a threshold that is not a number gives a bound that keeps the comparison's meaning:
# null for null or a boolean, "" otherwise.
within_bound(days) := b if {
	b := time.add_date(time.now_ns(), 0, 0, days)
} else := time.now_ns() + (round_up(days) * ns_per_day) if {
	is_number(days)
} else := null if {
	days in {null, true, false}
} else := ""

# never(ts) holds for a time that never happened: absent, null or empty.
never(ts) if ts == null

never(ts) if ts == ""

# floor_days rounds a duration in nanoseconds down to whole days, towards minus infinity
# (OPA's floor rounds small negative fractions to 0).
floor_days(ns) := floor(ns / ns_per_day) if ns >= 0

floor_days(ns) := 0 - ceil((0 - ns) / ns_per_day) if ns < 0

# round_down and round_up are floor and ceil, also for negative fractions (OPA rounds
# floor(-0.5) to 0 and ceil(-0.5) to 1).
round_down(x) := floor(x) if x >= 0

round_down(x) := 0 - ceil(0 - x) if x < 0

round_up(x) := ceil(x) if x >= 0

round_up(x) := 0 - floor(0 - x) if x < 0
