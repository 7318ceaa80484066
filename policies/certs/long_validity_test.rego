package warden.certs.long_validity_test

import data.warden.certs.long_validity as policy

cert(not_before, not_after) := {
	"subject": "CN=vpn.acme.example",
	"issuer": "CN=Acme Internal CA",
	"not_before": not_before,
	"not_after": not_after,
	"key_algorithm": "RSA",
	"key_size": 2048,
	"signature_algorithm": "SHA256-RSA",
	"self_signed": false,
	"is_ca": false,
}

acm(c) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9",
	"type": "aws.acm.certificate",
	"name": "vpn.acme.example",
	"attributes": {"status": "ISSUED", "cert_type": "IMPORTED", "certificate": c},
}}

endpoint(reachable, c) := {"resource": {
	"uid": "tls://vpn.acme.example:443",
	"type": "tls.endpoint",
	"name": "vpn.acme.example:443",
	"attributes": {"host": "vpn.acme.example", "port": 443, "reachable": reachable, "certificate": c},
}}

test_five_year_imported_certificate if {
	policy.deny == {{
		"msg": "ACM certificate vpn.acme.example is valid for 1827 days (2024-01-01 to 2029-01-01), more than 398",
		"validity_days": 1827,
	}} with input as acm(cert("2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z"))
}

test_399_days_is_too_long if {
	count(policy.deny) == 1 with input as acm(cert("2026-01-01T00:00:00Z", "2027-02-04T00:00:01Z"))
}

test_near_miss_exactly_398_days if {
	count(policy.deny) == 0 with input as acm(cert("2026-01-01T00:00:00Z", "2027-02-03T00:00:00Z"))
}

test_near_miss_acm_issued_395_days if {
	count(policy.deny) == 0 with input as acm(cert("2026-06-01T00:00:00Z", "2027-07-01T23:59:59Z"))
}

test_certificate_that_never_expires if {
	policy.deny == {{
		"msg": "the certificate of endpoint vpn.acme.example:443 never expires (valid from 2025-03-01 to 9999-12-31)",
		"validity_days": null,
	}} with input as endpoint(true, cert("2025-03-01T00:00:00Z", "9999-12-31T23:59:59Z"))
}

test_near_miss_ca_certificate_and_unreachable_endpoint if {
	count(policy.deny) == 0 with input as acm(object.union(cert("2020-01-01T00:00:00Z", "2040-01-01T00:00:00Z"), {"is_ca": true}))
	count(policy.deny) == 0 with input as endpoint(false, cert("2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z"))
}

test_threshold_from_config if {
	count(policy.deny) == 1 with input as acm(cert("2026-01-01T00:00:00Z", "2026-04-02T00:00:00Z")) with data.warden.config.cert_max_validity_days as 90
	count(policy.deny) == 0 with input as acm(cert("2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z")) with data.warden.config.cert_max_validity_days as 1827
}

# --- messages never decide a violation -------------------------------------------

test_certificate_without_name_still_violates if {
	{v.msg | some v in policy.deny with input as json.remove(acm(cert("2024-01-01T00:00:00Z", "2029-01-01T00:00:00Z")), ["resource/name"])} == {"ACM certificate arn:aws:acm:eu-west-1:111111111111:certificate/1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9 is valid for 1827 days (2024-01-01 to 2029-01-01), more than 398"}
}
