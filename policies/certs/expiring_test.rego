package warden.certs.expiring_test

import data.warden.certs.expiring

# 2026-11-30T12:00:00Z
now := 1796040000000000000

acm(not_after) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/9a4e2c71-3b58-4f0d-8e6a-b1c7d2f09e34",
	"type": "aws.acm.certificate",
	"name": "api.acme.example",
	"attributes": {
		"status": "ISSUED",
		"renewal_status": "PENDING_VALIDATION",
		"certificate": {
			"subject": "CN=api.acme.example",
			"not_after": not_after,
			"key_algorithm": "RSA",
			"key_size": 2048,
			"signature_algorithm": "SHA256-RSA",
		},
	},
}}

test_expires_in_10_days if {
	expiring.deny == {{"msg": "ACM certificate api.acme.example expires on 2026-12-10 (in 10 days)"}} with input as acm("2026-12-10T23:59:59Z")
		with time.now_ns as now
}

test_29_days_23_hours_left if {
	count(expiring.deny) == 1 with input as acm("2026-12-30T11:00:00Z") with time.now_ns as now
}

test_30_days_left_is_a_near_miss if {
	count(expiring.deny) == 0 with input as acm("2026-12-30T12:00:00Z") with time.now_ns as now
}

test_already_expired_is_not_expiring if {
	count(expiring.deny) == 0 with input as acm("2026-11-30T11:00:00Z") with time.now_ns as now
	count(expiring.deny) == 0 with input as acm("2026-10-01T00:00:00Z") with time.now_ns as now
}

test_unreachable_endpoint_is_not_judged if {
	count(expiring.deny) == 0 with input as {"resource": {
		"type": "tls.endpoint",
		"name": "vpn.acme.example:443",
		"attributes": {"reachable": false, "certificate": {"not_after": "2026-12-05T00:00:00Z"}},
	}}
		with time.now_ns as now
}

test_window_from_config if {
	count(expiring.deny) == 1 with input as acm("2027-01-20T00:00:00Z") with time.now_ns as now
		with data.warden.config.cert_expiry_warning_days as 60
}

test_expires_in_12_hours if {
	expiring.deny == {{"msg": "ACM certificate api.acme.example expires on 2026-12-01 (in 0 days)"}} with input as acm("2026-12-01T00:00:00Z")
		with time.now_ns as now
}

test_boundary_to_the_nanosecond if {
	count(expiring.deny) == 1 with input as acm("2026-12-30T11:59:59.999999999Z") with time.now_ns as now
	count(expiring.deny) == 0 with input as acm("2026-12-30T12:00:00Z") with time.now_ns as now
	count(expiring.deny) == 1 with input as acm("2026-11-30T12:00:00Z") with time.now_ns as now
}

test_window_not_a_whole_number if {
	# whole days left < 29.5 ⟺ fewer than 30 days left
	count(expiring.deny) == 1 with input as acm("2026-12-30T11:59:59Z") with time.now_ns as now
		with data.warden.config.cert_expiry_warning_days as 29.5
	count(expiring.deny) == 0 with input as acm("2026-12-30T12:00:00Z") with time.now_ns as now
		with data.warden.config.cert_expiry_warning_days as 29.5
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := acm("2026-12-10T23:59:59Z")
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in expiring.deny with input as given with time.now_ns as now}
	count(want) > 0
	{v.msg | some v in expiring.deny with input as json.remove(given, ["resource/name"]) with time.now_ns as now} == want
}
