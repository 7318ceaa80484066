package warden.certs.weak_signature_test

import data.warden.certs.weak_signature

gcp(algorithm) := {"resource": {
	"uid": "//compute.googleapis.com/projects/acme-prod-4821/global/sslCertificates/api-lb-cert-2024",
	"type": "gcp.compute.ssl_certificate",
	"name": "api-lb-cert-2024",
	"attributes": {"cert_type": "SELF_MANAGED", "certificate": {
		"subject": "CN=api.acme.example",
		"not_after": "2027-02-01T00:00:00Z",
		"key_algorithm": "RSA",
		"key_size": 2048,
		"signature_algorithm": algorithm,
	}},
}}

test_sha1 if {
	weak_signature.deny == {{
		"msg": "SSL certificate api-lb-cert-2024 is signed with SHA1-RSA",
		"signature_algorithm": "SHA1-RSA",
	}} with input as gcp("SHA1-RSA")
}

test_md5_and_ecdsa_sha1 if {
	count(weak_signature.deny) == 1 with input as gcp("MD5-RSA")
	count(weak_signature.deny) == 1 with input as gcp("ECDSA-SHA1")
}

test_sha256_is_a_near_miss if {
	count(weak_signature.deny) == 0 with input as gcp("SHA256-RSA")
	count(weak_signature.deny) == 0 with input as gcp("ECDSA-SHA256")
}

test_unreachable_endpoint_is_not_judged if {
	count(weak_signature.deny) == 0 with input as {"resource": {
		"type": "tls.endpoint",
		"name": "vpn.acme.example:443",
		"attributes": {"reachable": false, "certificate": {"signature_algorithm": "SHA1-RSA"}},
	}}
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := gcp("SHA1-RSA")
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in weak_signature.deny with input as given}
	count(want) > 0
	{v.msg | some v in weak_signature.deny with input as json.remove(given, ["resource/name"])} == want
}
