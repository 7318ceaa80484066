package warden.aws.iam.console_password_unused_test

import data.warden.aws.iam.console_password_unused

# 2026-11-30T12:00:00Z
now := 1796040000000000000

user(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/farah.haddad",
	"type": "aws.iam.user",
	"name": "farah.haddad",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{
			"created": "2024-03-11T09:00:00Z",
			"password_enabled": true,
			"password_last_used": "2026-09-10T08:47:00Z",
			"password_last_changed": "2026-03-02T10:00:00Z",
			"mfa_active": true,
			"access_keys": [],
		},
		overrides,
	),
}}

test_unused_for_81_days if {
	console_password_unused.deny == {{"msg": "user farah.haddad has not signed in to the console for 81 days (last 2026-09-10)"}} with input as user({})
		with time.now_ns as now
}

test_used_45_days_ago_is_a_near_miss if {
	count(console_password_unused.deny) == 0 with input as user({"password_last_used": "2026-10-16T10:00:00Z"}) with time.now_ns as now
}

test_used_46_days_ago if {
	count(console_password_unused.deny) == 1 with input as user({"password_last_used": "2026-10-15T10:00:00Z"}) with time.now_ns as now
}

test_never_used_old_user if {
	console_password_unused.deny == {{"msg": "user farah.haddad has a console password that was never used (user created 994 days ago)"}} with input as user({"password_last_used": null})
		with time.now_ns as now
}

test_never_used_without_last_changed if {
	count(console_password_unused.deny) == 1 with input as user({"password_last_used": null, "password_last_changed": null})
		with time.now_ns as now
}

test_never_used_new_user if {
	count(console_password_unused.deny) == 0 with input as user({"created": "2026-11-20T09:00:00Z", "password_last_used": null, "password_last_changed": "2026-11-20T09:00:00Z"})
		with time.now_ns as now
}

test_never_used_but_password_set_recently if {
	count(console_password_unused.deny) == 0 with input as user({"password_last_used": null, "password_last_changed": "2026-11-25T14:00:00Z"})
		with time.now_ns as now
}

test_no_password if {
	count(console_password_unused.deny) == 0 with input as user({"password_enabled": false}) with time.now_ns as now
	count(console_password_unused.deny) == 0 with input as user({"password_enabled": false, "password_last_used": null})
		with time.now_ns as now
}

test_threshold_from_config if {
	count(console_password_unused.deny) == 0 with input as user({}) with time.now_ns as now
		with data.warden.config.password_unused_days as 90
}

# --- messages never decide a violation -------------------------------------------

test_user_without_name_still_violates if {
	console_password_unused.deny == {{"msg": "user arn:aws:iam::111111111111:user/farah.haddad has not signed in to the console for 81 days (last 2026-09-10)"}} with input as json.remove(user({}), ["resource/name"])
		with time.now_ns as now
	count(console_password_unused.deny) == 1 with input as json.remove(user({"password_last_used": null}), ["resource/name"])
		with time.now_ns as now
}
