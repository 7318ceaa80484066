# METADATA
# title: Activity helpers
# description: >-
#   What the Policy Analyzer's last-authentication activity (last_authenticated and
#   last_authenticated_since of GCP service accounts and keys) proves about the resource
#   being evaluated: whether it authenticated nothing for a whole window, failing closed
#   where the data cannot speak.
package warden.lib.activity

import data.warden.lib.usage

# window_days is the window, the one the AWS usage policies use (setting
# unused_access_window_days, 90 days).
window_days := usage.window_days

# window_start_ns is the window's start: it ends now (the scan's time). Undefined for a
# window of less than a day.
window_start_ns := time.add_date(time.now_ns(), 0, 0, 0 - window_days) if {
	is_number(window_days)
	window_days >= 1
}

# unused_evidence says why the resource authenticated nothing in the window; undefined
# when the data does not prove it: absent attributes (not asked, or the query failed), a
# last authentication within the window, or "never" over an observation period that began
# within the window (or is unknown).
unused_evidence := sprintf("last authenticated %s, %d days ago (window %d days)", [substring(last, 0, 10), days, window_days]) if {
	last := input.resource.attributes.last_authenticated
	is_string(last)
	t := time.parse_rfc3339_ns(last)
	t <= window_start_ns
	days := floor((time.now_ns() - t) / 86400000000000)
} else := sprintf("never authenticated since Google's observation began on %s (window %d days)", [substring(since, 0, 10), window_days]) if {
	input.resource.attributes.last_authenticated == null
	since := input.resource.attributes.last_authenticated_since
	is_string(since)
	time.parse_rfc3339_ns(since) <= window_start_ns
}
