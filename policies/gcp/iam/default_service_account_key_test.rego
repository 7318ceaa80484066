package warden.gcp.iam.default_service_account_key_test

import data.warden.gcp.iam.default_service_account_key

# 2026-11-30T12:00:00Z
now := 1796040000000000000

key(email, overrides) := {"resource": {
	"uid": sprintf("//iam.googleapis.com/projects/acme-prod-4821/serviceAccounts/%s/keys/9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5", [email]),
	"type": "gcp.iam.service_account_key",
	"name": "9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5",
	"account": "acme-prod-4821",
	"region": "global",
	"scope": "gcp/acme-prod-4821/iam",
	"tags": {},
	"attributes": object.union(
		{
			"key_id": "9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5",
			"service_account": email,
			"key_type": "USER_MANAGED",
			"valid_after": "2026-06-01T00:00:00Z",
			"valid_before": "9999-12-31T23:59:59Z",
			"disabled": false,
		},
		overrides,
	),
}}

test_key_of_default_compute_account if {
	default_service_account_key.deny == {{"msg": "default service account 480012345678-compute@developer.gserviceaccount.com has an enabled user-managed key 9a8b7c6d5e4f30211a2b3c4d5e6f708192a3b4c5: a portable credential for an account that is editor of its project by default"}} with input as key("480012345678-compute@developer.gserviceaccount.com", {})
		with time.now_ns as now
}

test_key_of_app_engine_default_account if {
	count(default_service_account_key.deny) == 1 with input as key("acme-prod-4821@appspot.gserviceaccount.com", {}) with time.now_ns as now
}

test_near_miss_key_of_user_created_account if {
	count(default_service_account_key.deny) == 0 with input as key("ci-deployer@acme-prod-4821.iam.gserviceaccount.com", {}) with time.now_ns as now
}

test_near_miss_google_managed_disabled_or_expired_key if {
	email := "480012345678-compute@developer.gserviceaccount.com"
	count(default_service_account_key.deny) == 0 with input as key(email, {"key_type": "SYSTEM_MANAGED"}) with time.now_ns as now
	count(default_service_account_key.deny) == 0 with input as key(email, {"disabled": true}) with time.now_ns as now
	count(default_service_account_key.deny) == 0 with input as key(email, {"valid_before": "2026-11-30T11:59:59Z"}) with time.now_ns as now
}

test_near_miss_key_without_service_account if {
	count(default_service_account_key.deny) == 0 with input as json.remove(key("480012345678-compute@developer.gserviceaccount.com", {}), ["resource/attributes/service_account"])
		with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_key_without_id_still_violates if {
	given := key("480012345678-compute@developer.gserviceaccount.com", {})
	default_service_account_key.deny == {{"msg": sprintf("default service account 480012345678-compute@developer.gserviceaccount.com has an enabled user-managed key %s: a portable credential for an account that is editor of its project by default", [given.resource.uid])}} with input as json.remove(given, ["resource/name", "resource/attributes/key_id"])
		with time.now_ns as now
}
