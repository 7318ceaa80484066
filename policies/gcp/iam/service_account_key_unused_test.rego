package warden.gcp.iam.service_account_key_unused_test

import data.warden.gcp.iam.service_account_key_unused

# Evaluated at 2026-12-06T12:00:00Z: the 90-day window starts 2026-09-07T12:00:00Z.
now := time.parse_rfc3339_ns("2026-12-06T12:00:00Z")

key(attrs) := {"resource": {
	"uid": "//iam.googleapis.com/projects/p/serviceAccounts/ci@p.iam.gserviceaccount.com/keys/k1",
	"type": "gcp.iam.service_account_key",
	"name": "k1",
	"account": "p",
	"attributes": object.union(
		{
			"key_id": "k1", "service_account": "ci@p.iam.gserviceaccount.com", "key_type": "USER_MANAGED",
			"valid_after": "2025-06-01T00:00:00Z", "valid_before": "9999-12-31T23:59:59Z", "disabled": false,
			"last_authenticated": "2026-03-01T07:00:00Z", "last_authenticated_since": "2025-12-06T07:00:00Z",
		},
		attrs,
	),
}}

test_last_used_before_the_window if {
	service_account_key_unused.deny == {{
		"msg": "user-managed key k1 of service account ci@p.iam.gserviceaccount.com, created 553 days ago, last authenticated 2026-03-01, 280 days ago (window 90 days)",
		"window_days": 90,
	}} with input as key({}) with time.now_ns as now
}

test_never_over_a_covering_period if {
	[v] := [v | some v in service_account_key_unused.deny] with input as key({"last_authenticated": null}) with time.now_ns as now
	contains(v.msg, "never authenticated since Google's observation began on 2025-12-06")
}

# judged_anyway are the cases that must not be reported, and are.
judged_anyway contains name if {
	some name, attrs in {
		"used within the window": {"last_authenticated": "2026-11-30T07:00:00Z"},
		"never, but observed only within the window": {"last_authenticated": null, "last_authenticated_since": "2026-10-01T07:00:00Z"},
		"never, period unknown": {"last_authenticated": null, "last_authenticated_since": null},
		"activity not read": {"last_authenticated": "absent", "last_authenticated_since": "absent"},
		"younger than the window": {"valid_after": "2026-10-01T00:00:00Z", "last_authenticated": null},
		"disabled": {"disabled": true},
		"expired": {"valid_before": "2026-01-10T10:00:00Z"},
		"Google-managed": {"key_type": "SYSTEM_MANAGED"},
	}
	resource := key(attrs)
	attributes := object.remove(resource.resource.attributes, [k | some k, v in resource.resource.attributes; v == "absent"])
	input_of := {"resource": object.union(object.remove(resource.resource, ["attributes"]), {"attributes": attributes})}
	count(service_account_key_unused.deny) > 0 with input as input_of with time.now_ns as now
}

test_not_judged if count(judged_anyway) == 0
