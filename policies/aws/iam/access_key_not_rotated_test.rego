package warden.aws.iam.access_key_not_rotated_test

import data.warden.aws.iam.access_key_not_rotated

# 2026-11-30T12:00:00Z
now := 1796040000000000000

key(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/ci-deploy-prod/accesskey/AKIA5XQ2JH7RMZ3KQ8TA",
	"type": "aws.iam.access_key",
	"name": "AKIA5XQ2JH7RMZ3KQ8TA",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{
			"access_key_id": "AKIA5XQ2JH7RMZ3KQ8TA",
			"user_name": "ci-deploy-prod",
			"status": "Active",
			"created": "2026-05-14T09:30:00Z",
			"last_used": "2026-11-29T22:10:00Z",
		},
		overrides,
	),
}}

test_key_200_days_old if {
	access_key_not_rotated.deny == {{"msg": "access key AKIA5XQ2JH7RMZ3KQ8TA of user ci-deploy-prod was created 200 days ago and has not been rotated (maximum 90)"}} with input as key({})
		with time.now_ns as now
}

test_key_91_days_old if {
	count(access_key_not_rotated.deny) == 1 with input as key({"created": "2026-08-31T11:00:00Z"}) with time.now_ns as now
}

test_key_one_day_too_young if {
	count(access_key_not_rotated.deny) == 0 with input as key({"created": "2026-09-01T11:00:00Z"}) with time.now_ns as now
}

test_inactive_key_never_fires if {
	count(access_key_not_rotated.deny) == 0 with input as key({"status": "Inactive"}) with time.now_ns as now
}

test_threshold_from_config if {
	count(access_key_not_rotated.deny) == 0 with input as key({}) with time.now_ns as now
		with data.warden.config.access_key_max_age_days as 365
}

test_boundary_to_the_nanosecond if {
	# 91 whole days: created at or before 2026-08-31T12:00:00Z
	count(access_key_not_rotated.deny) == 1 with input as key({"created": "2026-08-31T12:00:00Z"}) with time.now_ns as now
	count(access_key_not_rotated.deny) == 0 with input as key({"created": "2026-08-31T12:00:00.000000001Z"}) with time.now_ns as now
	count(access_key_not_rotated.deny) == 1 with input as key({"created": "2026-08-31T14:00:00+02:00"}) with time.now_ns as now
}

test_threshold_not_a_whole_number if {
	# whole days since > 90.5 ⟺ 91 whole days
	count(access_key_not_rotated.deny) == 1 with input as key({"created": "2026-08-31T12:00:00Z"}) with time.now_ns as now
		with data.warden.config.access_key_max_age_days as 90.5
	count(access_key_not_rotated.deny) == 0 with input as key({"created": "2026-09-01T12:00:00Z"}) with time.now_ns as now
		with data.warden.config.access_key_max_age_days as 90.5
}

test_unparsable_or_missing_creation_time_never_fires if {
	count(access_key_not_rotated.deny) == 0 with input as key({"created": null}) with time.now_ns as now
	count(access_key_not_rotated.deny) == 0 with input as key({"created": ""}) with time.now_ns as now
	count(access_key_not_rotated.deny) == 0 with input as key({"created": "last year"}) with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_key_without_id_or_user_name_still_violates if {
	bare := json.remove(key({}), ["resource/name", "resource/attributes/access_key_id", "resource/attributes/user_name"])
	access_key_not_rotated.deny == {{"msg": "access key arn:aws:iam::111111111111:user/ci-deploy-prod/accesskey/AKIA5XQ2JH7RMZ3KQ8TA of user unknown was created 200 days ago and has not been rotated (maximum 90)"}} with input as bare
		with time.now_ns as now
	with_arn := key({"user_arn": "arn:aws:iam::111111111111:user/ci-deploy-prod", "user_name": ""})
	access_key_not_rotated.deny == {{"msg": "access key AKIA5XQ2JH7RMZ3KQ8TA of user arn:aws:iam::111111111111:user/ci-deploy-prod was created 200 days ago and has not been rotated (maximum 90)"}} with input as with_arn
		with time.now_ns as now
}
