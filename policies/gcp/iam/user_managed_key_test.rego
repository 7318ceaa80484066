package warden.gcp.iam.user_managed_key_test

import data.warden.gcp.iam.user_managed_key

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
			"valid_after": "2026-11-20T08:15:00Z",
			"valid_before": "9999-12-31T23:59:59Z",
			"disabled": false,
			"key_algorithm": "KEY_ALG_RSA_2048",
		},
		overrides,
	),
}}

test_young_user_managed_key if {
	user_managed_key.deny == {{"msg": "service account ci-deployer@acme-prod-4821.iam.gserviceaccount.com has an enabled user-managed key 3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f (created 2026-11-20)"}} with input as key({})
		with time.now_ns as now
}

test_key_expiring_in_the_future_still_violates if {
	count(user_managed_key.deny) == 1 with input as key({"valid_before": "2026-11-30T12:00:01Z"}) with time.now_ns as now
	count(user_managed_key.deny) == 1 with input as key({"valid_before": null}) with time.now_ns as now
}

test_near_miss_system_managed_key if {
	count(user_managed_key.deny) == 0 with input as key({"key_type": "SYSTEM_MANAGED"}) with time.now_ns as now
}

test_near_miss_disabled_key if {
	count(user_managed_key.deny) == 0 with input as key({"disabled": true}) with time.now_ns as now
}

test_near_miss_expired_key if {
	count(user_managed_key.deny) == 0 with input as key({"valid_before": "2026-11-30T11:59:59Z"}) with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_key_without_names_still_violates if {
	bare := json.remove(key({}), ["resource/name", "resource/attributes/key_id", "resource/attributes/service_account", "resource/attributes/valid_after"])
	user_managed_key.deny == {{"msg": "service account unknown has an enabled user-managed key //iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/ci-deployer@acme-prod-4821.iam.gserviceaccount.com/keys/3f9c2a7d41b08e5c6a1d2b3c4e5f6a7b8c9d0e1f (created at an unknown time)"}} with input as bare
		with time.now_ns as now
}
