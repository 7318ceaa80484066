package warden.aws.iam.role_unused_test

import data.warden.aws.iam.role_unused

# 2026-11-30T12:00:00Z
now := 1796040000000000000

role(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:role/data-migration-2025",
	"type": "aws.iam.role",
	"name": "data-migration-2025",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{
			"path": "/",
			"created": "2025-03-10T13:20:00Z",
			"last_used": "2025-06-30T17:02:00Z",
			"last_used_region": "eu-west-1",
			"service_linked": false,
		},
		overrides,
	),
}}

service_linked := {
	"path": "/aws-service-role/elasticloadbalancing.amazonaws.com/",
	"service_linked": true,
	"last_used": null,
}

test_unused_for_517_days if {
	role_unused.deny == {{"msg": "role data-migration-2025 has not been used for 517 days (last used 2025-06-30)"}} with input as role({})
		with time.now_ns as now
}

test_never_used_and_old if {
	role_unused.deny == {{"msg": "role data-migration-2025 has never been used since it was created 629 days ago"}} with input as role({"last_used": null})
		with time.now_ns as now
}

test_never_used_one_day_too_young if {
	count(role_unused.deny) == 0 with input as role({"created": "2026-09-01T09:00:00Z", "last_used": null}) with time.now_ns as now
}

test_recently_used if {
	count(role_unused.deny) == 0 with input as role({"last_used": "2026-11-29T06:00:00Z"}) with time.now_ns as now
}

test_service_linked_role_is_exempt if {
	count(role_unused.deny) == 0 with input as role(service_linked) with time.now_ns as now
	count(role_unused.deny) == 0 with input as role({"service_linked": true}) with time.now_ns as now
}

test_service_role_path_without_flag_is_exempt if {
	count(role_unused.deny) == 0 with input as role({"path": "/aws-service-role/rds.amazonaws.com/", "service_linked": null})
		with time.now_ns as now
}

test_threshold_from_config if {
	count(role_unused.deny) == 0 with input as role({"last_used": "2026-06-01T00:00:00Z"}) with time.now_ns as now
		with data.warden.config.role_unused_days as 365
}

# --- messages never decide a violation -------------------------------------------

test_role_without_name_still_violates if {
	role_unused.deny == {{"msg": "role arn:aws:iam::111111111111:role/data-migration-2025 has not been used for 517 days (last used 2025-06-30)"}} with input as json.remove(role({}), ["resource/name"])
		with time.now_ns as now
	count(role_unused.deny) == 1 with input as json.remove(role({"last_used": null}), ["resource/name"])
		with time.now_ns as now
}
