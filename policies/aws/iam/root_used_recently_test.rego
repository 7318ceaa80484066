package warden.aws.iam.root_used_recently_test

import data.warden.aws.iam.root_used_recently

# 2026-11-30T12:00:00Z
now := 1796040000000000000

root(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{"mfa_active": true, "access_keys_active": 1, "password_last_used": "2026-02-14T10:22:31Z"},
		overrides,
	),
}}

keys(overrides) := {v.key | some v in root_used_recently.deny with input as root(overrides) with time.now_ns as now}

test_password_used_this_morning if {
	root_used_recently.deny == {{
		"msg": "the root user of account 111111111111 signed in with its password less than a day ago (2026-11-30T08:12:00Z)",
		"key": "password",
	}} with input as root({"password_last_used": "2026-11-30T08:12:00Z"})
		with time.now_ns as now
}

test_access_keys_used_yesterday if {
	root_used_recently.deny == {{
		"msg": "an access key of the root user of account 111111111111 was used 1 day ago (2026-11-29T09:41:00Z)",
		"key": "access_keys",
	}} with input as root({"access_keys_last_used": "2026-11-29T09:41:00Z"})
		with time.now_ns as now
}

test_password_and_keys_are_two_violations if {
	keys({"password_last_used": "2026-11-30T11:00:00Z", "access_keys_last_used": "2026-11-30T11:30:00Z"}) == {"password", "access_keys"}
}

# One whole day ago is still within the default window of 1 day (Prowler's reading).
test_used_exactly_one_day_ago_is_recent if {
	keys({"password_last_used": "2026-11-28T12:00:01Z"}) == {"password"}
}

test_used_two_days_ago_is_a_near_miss if {
	keys({"password_last_used": "2026-11-28T12:00:00Z", "access_keys_last_used": "2026-11-27T09:00:00Z"}) == set()
}

test_never_used_keys_and_old_password if {
	count(root_used_recently.deny) == 0 with input as root({}) with time.now_ns as now
	count(root_used_recently.deny) == 0 with input as root({"password_last_used": null, "access_keys_last_used": null}) with time.now_ns as now
}

test_window_from_config if {
	count(root_used_recently.deny) == 1 with input as root({"password_last_used": "2026-11-01T08:00:00Z"})
		with time.now_ns as now
		with data.warden.config.root_usage_days as 30
	count(root_used_recently.deny) == 0 with input as root({"password_last_used": "2026-10-30T08:00:00Z"})
		with time.now_ns as now
		with data.warden.config.root_usage_days as 30
}

test_days_in_message if {
	root_used_recently.deny == {{
		"msg": "the root user of account 111111111111 signed in with its password 12 days ago (2026-11-18T08:00:00Z)",
		"key": "password",
	}} with input as root({"password_last_used": "2026-11-18T08:00:00Z"})
		with time.now_ns as now
		with data.warden.config.root_usage_days as 30
}

# --- messages never decide a violation -------------------------------------------

test_root_without_account_still_violates if {
	root_used_recently.deny == {{
		"msg": "an access key of the root user of account arn:aws:iam::111111111111:root was used less than a day ago (2026-11-30T09:41:00Z)",
		"key": "access_keys",
	}} with input as json.remove(root({"access_keys_last_used": "2026-11-30T09:41:00Z"}), ["resource/account", "resource/name"])
		with time.now_ns as now
}
