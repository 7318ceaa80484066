package warden.certs.self_signed_managed_test

import data.warden.certs.self_signed_managed as policy

# 2026-11-30T12:00:00Z
now := 1796040000000000000

cert(self_signed) := {
	"subject": "CN=admin.internal.acme.example",
	"issuer": "CN=admin.internal.acme.example",
	"not_before": "2026-01-01T00:00:00Z",
	"not_after": "2027-01-01T00:00:00Z",
	"key_algorithm": "RSA",
	"key_size": 2048,
	"signature_algorithm": "SHA256-RSA",
	"self_signed": self_signed,
	"is_ca": false,
}

acm(overrides) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/2c3d4e5f-6071-4829-93a4-b5c6d7e8f901",
	"type": "aws.acm.certificate",
	"name": "admin.internal.acme.example",
	"attributes": object.union(
		{
			"status": "ISSUED",
			"cert_type": "IMPORTED",
			"in_use_by": ["arn:aws:elasticloadbalancing:eu-west-1:111111111111:loadbalancer/app/admin/89abcdef01234567"],
			"certificate": cert(true),
		},
		overrides,
	),
}}

gcp(c) := {"resource": {
	"uid": "//compute.googleapis.com/projects/acme-prod-4821/global/sslCertificates/admin-lb",
	"type": "gcp.compute.ssl_certificate",
	"name": "admin-lb",
	"attributes": {"cert_type": "SELF_MANAGED", "certificate": c},
}}

test_imported_self_signed_certificate_in_use if {
	policy.deny == {{"msg": "ACM certificate admin.internal.acme.example is self-signed (CN=admin.internal.acme.example) and is attached to 1 resource: clients cannot tell it from an attacker's"}} with input as acm({})
		with time.now_ns as now
}

test_gcp_self_managed_certificate if {
	{v.msg | some v in policy.deny} == {"SSL certificate admin-lb is self-signed (CN=admin.internal.acme.example) and is uploaded for a load balancer: clients cannot tell it from an attacker's"} with input as gcp(cert(true))
		with time.now_ns as now
}

test_near_miss_unused_or_ca_signed if {
	count(policy.deny) == 0 with input as acm({"in_use_by": []}) with time.now_ns as now
	count(policy.deny) == 0 with input as acm({"certificate": cert(false)}) with time.now_ns as now
	count(policy.deny) == 0 with input as json.remove(acm({}), ["resource/attributes/in_use_by"]) with time.now_ns as now
	count(policy.deny) == 0 with input as gcp(cert(false)) with time.now_ns as now
}

test_near_miss_expired_certificate_is_cert_001s if {
	count(policy.deny) == 0 with input as acm({}) with time.now_ns as 1830000000000000000
}

test_near_miss_amazon_issued if {
	count(policy.deny) == 0 with input as acm({"cert_type": "AMAZON_ISSUED"}) with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_certificate_without_name_or_subject_still_violates if {
	bare := json.remove(acm({}), ["resource/name", "resource/attributes/certificate/subject"])
	{v.msg | some v in policy.deny with input as bare} == {"ACM certificate arn:aws:acm:eu-west-1:111111111111:certificate/2c3d4e5f-6071-4829-93a4-b5c6d7e8f901 is self-signed (no subject) and is attached to 1 resource: clients cannot tell it from an attacker's"}
		with time.now_ns as now
}
