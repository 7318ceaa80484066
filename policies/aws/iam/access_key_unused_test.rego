package warden.aws.iam.access_key_unused_test

import data.warden.aws.iam.access_key_unused

# 2026-11-30T12:00:00Z
now := 1796040000000000000

key(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/svc-backup-export/accesskey/AKIA5XQ2JH7RN4WBEK3D",
	"type": "aws.iam.access_key",
	"name": "AKIA5XQ2JH7RN4WBEK3D",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{
			"access_key_id": "AKIA5XQ2JH7RN4WBEK3D",
			"user_name": "svc-backup-export",
			"status": "Active",
			"created": "2025-06-01T08:00:00Z",
			"last_used": "2026-07-01T03:12:00Z",
		},
		overrides,
	),
}}

test_unused_for_152_days if {
	access_key_unused.deny == {{"msg": "access key AKIA5XQ2JH7RN4WBEK3D of user svc-backup-export has not been used for 152 days (last used 2026-07-01)"}} with input as key({})
		with time.now_ns as now
}

test_never_used_and_old if {
	count(access_key_unused.deny) == 1 with input as key({"last_used": null}) with time.now_ns as now
}

test_never_used_absent_field if {
	count(access_key_unused.deny) == 1 with input as key({"created": "2026-08-01T00:00:00Z", "last_used": null})
		with time.now_ns as now
}

test_used_exactly_90_days_ago_is_a_near_miss if {
	count(access_key_unused.deny) == 0 with input as key({"last_used": "2026-09-01T11:00:00Z"}) with time.now_ns as now
}

test_used_91_days_ago if {
	count(access_key_unused.deny) == 1 with input as key({"last_used": "2026-08-31T11:00:00Z"}) with time.now_ns as now
}

test_never_used_but_young if {
	count(access_key_unused.deny) == 0 with input as key({"created": "2026-09-05T10:00:00Z", "last_used": null})
		with time.now_ns as now
}

test_inactive_key_never_fires if {
	count(access_key_unused.deny) == 0 with input as key({"status": "Inactive"}) with time.now_ns as now
	count(access_key_unused.deny) == 0 with input as key({"status": "Inactive", "last_used": null}) with time.now_ns as now
}

test_threshold_from_config if {
	count(access_key_unused.deny) == 0 with input as key({}) with time.now_ns as now
		with data.warden.config.access_key_unused_days as 200
	count(access_key_unused.deny) == 1 with input as key({"last_used": "2026-10-01T00:00:00Z"}) with time.now_ns as now
		with data.warden.config.access_key_unused_days as 45
}

# --- messages never decide a violation -------------------------------------------

test_key_without_id_or_user_name_still_violates if {
	bare := json.remove(key({}), ["resource/name", "resource/attributes/access_key_id", "resource/attributes/user_name"])
	access_key_unused.deny == {{"msg": "access key arn:aws:iam::111111111111:user/svc-backup-export/accesskey/AKIA5XQ2JH7RN4WBEK3D of user unknown has not been used for 152 days (last used 2026-07-01)"}} with input as bare
		with time.now_ns as now
	count(access_key_unused.deny) == 1 with input as json.remove(key({"last_used": null}), ["resource/attributes/access_key_id", "resource/attributes/user_name"])
		with time.now_ns as now
}
