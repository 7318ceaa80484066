# METADATA
# title: Time helpers
# description: Ages and deadlines measured from time.now_ns(), which warden sets to the snapshot's collection time.
package warden.lib.time

ns_per_day := 86400000000000

# days_since(ts) is the number of whole days from the RFC 3339 time ts to now.
# It is undefined when ts is null, empty or not a time.
days_since(ts) := days if {
	is_string(ts)
	ts != ""
	t := time.parse_rfc3339_ns(ts)
	days := floor_days(time.now_ns() - t)
}

# days_until(ts) is the number of whole days from now to the RFC 3339 time ts (negative once passed).
days_until(ts) := days if {
	is_string(ts)
	ts != ""
	t := time.parse_rfc3339_ns(ts)
	days := floor_days(t - time.now_ns())
}

# older_than(ts, days) holds when ts is more than days days ago.
older_than(ts, days) if days_since(ts) > days

# never(ts) holds for a time that never happened: absent, null or empty.
never(ts) if ts == null

never(ts) if ts == ""

# floor_days rounds a duration in nanoseconds down to whole days, towards minus infinity
# (OPA's floor rounds small negative fractions to 0).
floor_days(ns) := floor(ns / ns_per_day) if ns >= 0

floor_days(ns) := 0 - ceil((0 - ns) / ns_per_day) if ns < 0
