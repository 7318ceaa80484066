package warden.aws.iam.root_access_key_unused_test

import data.warden.aws.iam.root_access_key_unused

now := 1796040000000000000 # 2026-11-30T12:00:00Z

root(keys) := {"resource": {
	"uid": "arn:aws:iam::222222222222:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "222222222222",
	"region": "global",
	"attributes": {"mfa_active": false, "access_keys_active": count(keys), "access_keys": keys},
}}

violations(keys) := vs if {
	vs := root_access_key_unused.deny with input as root(keys) with time.now_ns as now
}

test_key_unused_for_long_violates if {
	violations([{"slot": "2", "status": "Active", "created": "2019-04-03T11:20:00Z", "last_used": "2026-03-02T08:00:00Z"}]) == {{
		"msg": "access key 2 of the root user of account 222222222222 has not been used for 273 days (last used 2026-03-02)",
		"key": "2",
	}}
}

test_key_never_used_counts_from_its_creation if {
	violations([{"slot": "1", "status": "Active", "created": "2026-05-01T00:00:00Z"}]) == {{
		"msg": "access key 1 of the root user of account 222222222222 has never been used since it was created 213 days ago",
		"key": "1",
	}}
	count(violations([{"slot": "1", "status": "Active", "created": "2026-11-01T00:00:00Z"}])) == 0
}

test_recent_use_or_inactive_key_passes if {
	count(violations([{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z", "last_used": "2026-11-30T09:41:00Z"}])) == 0
	count(violations([{"slot": "1", "status": "Inactive", "created": "2019-04-03T11:20:00Z", "last_used": "2020-01-01T00:00:00Z"}])) == 0
}

test_setting_is_users_setting if {
	keys := [{"slot": "1", "status": "Active", "created": "2019-04-03T11:20:00Z", "last_used": "2026-10-01T12:00:00Z"}]
	count(violations(keys)) == 0
	count(root_access_key_unused.deny) == 1 with input as root(keys) with time.now_ns as now with data.warden.config.access_key_unused_days as 30
}
