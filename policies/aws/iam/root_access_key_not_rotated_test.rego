package warden.aws.iam.root_access_key_not_rotated_test

import data.warden.aws.iam.root_access_key_not_rotated

now := 1796040000000000000 # 2026-11-30T12:00:00Z

root(keys) := {"resource": {
	"uid": "arn:aws:iam::111111111111:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "111111111111",
	"region": "global",
	"attributes": {"mfa_active": true, "access_keys_active": count(keys), "access_keys": keys},
}}

violations(keys) := vs if {
	vs := root_access_key_not_rotated.deny with input as root(keys) with time.now_ns as now
}

# The issue's key: created with the root user in 2019, 2,798 days before now.
test_old_key_violates if {
	violations([{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z", "last_used": "2026-11-30T09:41:00Z"}]) == {{
		"msg": "access key 1 of the root user of account 111111111111 was created 2798 days ago and has not been rotated (maximum 90)",
		"key": "1",
	}}
}

test_each_old_key_violates if {
	keys := [
		{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z"},
		{"slot": "2", "status": "Active", "created": "2026-01-03T11:20:00Z"},
	]
	{v.key | some v in violations(keys)} == {"1", "2"}
}

# 90 whole days is the limit, as for users' keys.
test_ninety_days_passes_ninety_one_violates if {
	count(violations([{"slot": "1", "status": "Active", "created": "2026-09-01T11:00:00Z"}])) == 0
	count(violations([{"slot": "1", "status": "Active", "created": "2026-08-31T11:00:00Z"}])) == 1
}

test_inactive_or_absent_keys_pass if {
	count(violations([{"slot": "1", "status": "Inactive", "created": "2019-04-03T11:20:00Z"}])) == 0
	count(violations([])) == 0
	count(root_access_key_not_rotated.deny) == 0 with input as {"resource": {"type": "aws.iam.root_user", "attributes": {"mfa_active": true, "access_keys_active": 1}}} with time.now_ns as now
}

test_setting_is_users_setting if {
	keys := [{"slot": "1", "status": "Active", "created": "2026-10-01T12:00:00Z"}]
	count(root_access_key_not_rotated.deny) == 1 with input as root(keys) with time.now_ns as now with data.warden.config.access_key_max_age_days as 30
}

test_root_without_account_still_violates if {
	given := root([{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z"}])
	count(root_access_key_not_rotated.deny) == 1 with input as json.remove(given, ["resource/account", "resource/name"]) with time.now_ns as now
}
