package warden.certs.expired_test

import data.warden.certs.expired

# 2026-11-30T12:00:00Z
now := 1796040000000000000

cert(not_after) := {
	"subject": "CN=legacy-portal.acme.example",
	"not_after": not_after,
	"key_algorithm": "RSA",
	"key_size": 2048,
	"signature_algorithm": "SHA256-RSA",
}

acm(not_after) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/5d0c7a3e-8f21-4b6a-9c1d-2e7f4a9b6c01",
	"type": "aws.acm.certificate",
	"name": "legacy-portal.acme.example",
	"attributes": {"status": "EXPIRED", "certificate": cert(not_after)},
}}

endpoint(reachable, not_after) := {"resource": {
	"uid": "tls://legacy-portal.acme.example:443",
	"type": "tls.endpoint",
	"name": "legacy-portal.acme.example:443",
	"attributes": {"host": "legacy-portal.acme.example", "reachable": reachable, "certificate": cert(not_after)},
}}

test_expired_acm_certificate if {
	expired.deny == {{"msg": "ACM certificate legacy-portal.acme.example expired on 2026-10-31 (30 days ago)"}} with input as acm("2026-10-31T00:00:00Z")
		with time.now_ns as now
}

test_expired_one_second_ago if {
	count(expired.deny) == 1 with input as acm("2026-11-30T11:59:59Z") with time.now_ns as now
}

test_valid_until_now_is_a_near_miss if {
	count(expired.deny) == 0 with input as acm("2026-11-30T12:00:00Z") with time.now_ns as now
}

test_expired_gcp_certificate if {
	count(expired.deny) == 1 with input as {"resource": {
		"type": "gcp.compute.ssl_certificate",
		"name": "api-lb-cert-2024",
		"attributes": {"cert_type": "SELF_MANAGED", "certificate": cert("2026-01-01T00:00:00Z")},
	}}
		with time.now_ns as now
}

test_expired_endpoint if {
	expired.deny == {{"msg": "the certificate of endpoint legacy-portal.acme.example:443 expired on 2026-11-01 (29 days ago)"}} with input as endpoint(true, "2026-11-01T00:00:00Z")
		with time.now_ns as now
}

test_unreachable_endpoint_is_not_judged if {
	count(expired.deny) == 0 with input as endpoint(false, "2026-11-01T00:00:00Z") with time.now_ns as now
}

test_acm_certificate_without_certificate if {
	count(expired.deny) == 0 with input as {"resource": {
		"type": "aws.acm.certificate",
		"name": "pending.acme.example",
		"attributes": {"status": "PENDING_VALIDATION", "certificate": null},
	}}
		with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_certificate_without_name_still_violates if {
	expired.deny == {{"msg": "ACM certificate arn:aws:acm:eu-west-1:111111111111:certificate/5d0c7a3e-8f21-4b6a-9c1d-2e7f4a9b6c01 expired on 2026-10-31 (30 days ago)"}} with input as json.remove(acm("2026-10-31T00:00:00Z"), ["resource/name"])
		with time.now_ns as now
	expired.deny == {{"msg": "the certificate of endpoint tls://legacy-portal.acme.example:443 expired on 2026-11-01 (29 days ago)"}} with input as json.remove(endpoint(true, "2026-11-01T00:00:00Z"), ["resource/name"])
		with time.now_ns as now
}
