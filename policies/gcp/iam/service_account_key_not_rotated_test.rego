package warden.gcp.iam.service_account_key_not_rotated_test

import data.warden.gcp.iam.service_account_key_not_rotated

# 2026-11-30T12:00:00Z
now := 1796040000000000000

key(overrides) := {"resource": {
	"uid": "//iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/ci-deployer@acme-prod-4821.iam.gserviceaccount.com/keys/3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f",
	"type": "gcp.iam.service_account_key",
	"name": "3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f",
	"account": "acme-prod-4821",
	"region": "global",
	"scope": "gcp/acme-prod-4821/iam",
	"tags": {},
	"attributes": object.union(
		{
			"key_id": "3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f",
			"service_account": "ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
			"key_type": "USER_MANAGED",
			"valid_after": "2026-03-02T08:15:00Z",
			"valid_before": "9999-12-31T23:59:59Z",
			"disabled": false,
			"key_algorithm": "KEY_ALG_RSA_2048",
		},
		overrides,
	),
}}

test_key_273_days_old if {
	service_account_key_not_rotated.deny == {{"msg": "user-managed key 3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f of service account ci-deployer@acme-prod-4821.iam.gserviceaccount.com was created 273 days ago and has not been rotated (maximum 90)"}} with input as key({})
		with time.now_ns as now
}

test_key_91_days_old if {
	count(service_account_key_not_rotated.deny) == 1 with input as key({"valid_after": "2026-08-31T11:00:00Z"}) with time.now_ns as now
}

test_near_miss_key_exactly_90_days_old if {
	count(service_account_key_not_rotated.deny) == 0 with input as key({"valid_after": "2026-09-01T12:00:00Z"}) with time.now_ns as now
}

test_near_miss_disabled_key if {
	count(service_account_key_not_rotated.deny) == 0 with input as key({"disabled": true}) with time.now_ns as now
}

test_near_miss_system_managed_key if {
	count(service_account_key_not_rotated.deny) == 0 with input as key({"key_type": "SYSTEM_MANAGED"}) with time.now_ns as now
}

test_near_miss_expired_key if {
	count(service_account_key_not_rotated.deny) == 0 with input as key({"valid_before": "2026-11-30T11:59:59Z"}) with time.now_ns as now
	count(service_account_key_not_rotated.deny) == 1 with input as key({"valid_before": "2026-11-30T12:00:01Z"}) with time.now_ns as now
	count(service_account_key_not_rotated.deny) == 1 with input as key({"valid_before": null}) with time.now_ns as now
}

test_threshold_from_config if {
	count(service_account_key_not_rotated.deny) == 0 with input as key({}) with time.now_ns as now
		with data.warden.config.service_account_key_max_age_days as 365
}

# --- messages never decide a violation -------------------------------------------

test_key_without_id_or_service_account_still_violates if {
	bare := json.remove(key({}), ["resource/name", "resource/attributes/key_id", "resource/attributes/service_account"])
	service_account_key_not_rotated.deny == {{"msg": "user-managed key //iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/ci-deployer@acme-prod-4821.iam.gserviceaccount.com/keys/3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f of service account unknown was created 273 days ago and has not been rotated (maximum 90)"}} with input as bare
		with time.now_ns as now
}
