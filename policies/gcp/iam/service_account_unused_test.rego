package warden.gcp.iam.service_account_unused_test

import data.warden.gcp.iam.service_account_unused

# Evaluated at 2026-12-06T12:00:00Z: the 90-day window starts 2026-09-07T12:00:00Z.
now := time.parse_rfc3339_ns("2026-12-06T12:00:00Z")

account(attrs) := {"resource": {
	"uid": "//iam.googleapis.com/projects/p/serviceAccounts/etl@p.iam.gserviceaccount.com",
	"type": "gcp.iam.service_account",
	"name": "etl",
	"account": "p",
	"attributes": object.union(
		{
			"email": "etl@p.iam.gserviceaccount.com", "disabled": false, "default_compute": false,
			"last_authenticated": "2026-05-01T07:00:00Z", "last_authenticated_since": "2025-12-06T07:00:00Z",
		},
		attrs,
	),
}}

test_last_used_before_the_window if {
	service_account_unused.deny == {{
		"msg": "service account etl@p.iam.gserviceaccount.com last authenticated 2026-05-01, 219 days ago (window 90 days)",
		"last_authenticated": "2026-05-01T07:00:00Z",
		"window_days": 90,
	}} with input as account({}) with time.now_ns as now
}

test_window_setting if {
	count(service_account_unused.deny) == 0 with input as account({}) with time.now_ns as now
		with data.warden.config.unused_access_window_days as 300
}

judged_anyway contains name if {
	some name, attrs in {
		"used within the window": {"last_authenticated": "2026-11-30T07:00:00Z"},
		# No creation time: a new account has not used anything yet.
		"never": {"last_authenticated": null},
		"disabled": {"disabled": true},
		"default compute": {"default_compute": true},
	}
	count(service_account_unused.deny) > 0 with input as account(attrs) with time.now_ns as now
}

test_not_judged if count(judged_anyway) == 0

test_activity_not_read if {
	a := account({})
	r := object.union(object.remove(a.resource, ["attributes"]), {"attributes": object.remove(a.resource.attributes, ["last_authenticated", "last_authenticated_since"])})
	count(service_account_unused.deny) == 0 with input as {"resource": r}
		with time.now_ns as now
}
