package warden.certs.acm_transparency_logging_disabled_test

import data.warden.certs.acm_transparency_logging_disabled as policy

acm(overrides) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/7c1e2d3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f",
	"type": "aws.acm.certificate",
	"name": "shop.acme.example",
	"account": "111111111111",
	"region": "eu-west-1",
	"attributes": object.union(
		{
			"domain_name": "shop.acme.example",
			"status": "ISSUED",
			"cert_type": "AMAZON_ISSUED",
			"in_use_by": ["arn:aws:elasticloadbalancing:eu-west-1:111111111111:loadbalancer/app/shop/0123456789abcdef"],
			"transparency_logging": "DISABLED",
			"certificate": {
				"subject": "CN=shop.acme.example",
				"not_before": "2026-06-01T00:00:00Z",
				"not_after": "2027-07-01T23:59:59Z",
				"key_algorithm": "RSA",
				"key_size": 2048,
				"signature_algorithm": "SHA256-RSA",
			},
		},
		overrides,
	),
}}

test_amazon_issued_certificate_opted_out if {
	policy.deny == {{"msg": "ACM certificate shop.acme.example opts out of Certificate Transparency logging and is in use by 1 resource: Chrome and Safari refuse it"}} with input as acm({})
}

test_unused_and_pending_certificates if {
	policy.deny == {{"msg": "ACM certificate shop.acme.example opts out of Certificate Transparency logging: Chrome and Safari refuse it"}} with input as acm({"in_use_by": [], "status": "PENDING_VALIDATION"})
	{v.msg | some v in policy.deny} == {"ACM certificate shop.acme.example opts out of Certificate Transparency logging and is in use by 2 resources: Chrome and Safari refuse it"} with input as acm({"in_use_by": ["arn:a", "arn:b"]})
}

test_near_miss_logging_enabled if {
	count(policy.deny) == 0 with input as acm({"transparency_logging": "ENABLED"})
}

test_near_miss_imported_and_private_certificates if {
	count(policy.deny) == 0 with input as acm({"cert_type": "IMPORTED"})
	count(policy.deny) == 0 with input as acm({"cert_type": "PRIVATE"})
}

test_near_miss_expired_or_revoked if {
	count(policy.deny) == 0 with input as acm({"status": "EXPIRED"})
	count(policy.deny) == 0 with input as acm({"status": "REVOKED"})
}

test_near_miss_not_read if {
	count(policy.deny) == 0 with input as json.remove(acm({}), ["resource/attributes/transparency_logging"])
	count(policy.deny) == 0 with input as json.remove(acm({}), ["resource/attributes/cert_type"])
}

# --- messages never decide a violation -------------------------------------------

test_certificate_without_name_still_violates if {
	{v.msg | some v in policy.deny with input as json.remove(acm({}), ["resource/name", "resource/attributes/in_use_by"])} == {"ACM certificate arn:aws:acm:eu-west-1:111111111111:certificate/7c1e2d3f-4a5b-6c7d-8e9f-0a1b2c3d4e5f opts out of Certificate Transparency logging: Chrome and Safari refuse it"}
}
