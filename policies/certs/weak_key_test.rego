package warden.certs.weak_key_test

import data.warden.certs.weak_key

cert(algorithm, size) := {
	"subject": "CN=partner-sso.acme.example",
	"not_after": "2027-03-01T00:00:00Z",
	"key_algorithm": algorithm,
	"key_size": size,
	"signature_algorithm": "SHA256-RSA",
}

acm(algorithm, size) := {"resource": {
	"type": "aws.acm.certificate",
	"name": "partner-sso.acme.example",
	"attributes": {"cert_type": "IMPORTED", "certificate": cert(algorithm, size)},
}}

endpoint(reachable, algorithm, size) := {"resource": {
	"type": "tls.endpoint",
	"name": "partner-sso.acme.example:443",
	"attributes": {"reachable": reachable, "certificate": cert(algorithm, size)},
}}

test_rsa_1024 if {
	weak_key.deny == {{
		"msg": "ACM certificate partner-sso.acme.example has a weak RSA-1024 key (minimum 2048 bits)",
		"key_algorithm": "RSA",
		"key_size": 1024,
	}} with input as acm("RSA", 1024)
}

test_rsa_2048_is_a_near_miss if {
	count(weak_key.deny) == 0 with input as acm("RSA", 2048)
}

test_ec_224 if {
	count(weak_key.deny) == 1 with input as acm("EC", 224)
}

test_ec_256_is_a_near_miss if {
	count(weak_key.deny) == 0 with input as acm("EC", 256)
}

test_dsa if {
	count(weak_key.deny) == 1 with input as acm("DSA", 2048)
}

test_ed25519 if {
	count(weak_key.deny) == 0 with input as acm("ED25519", 256)
}

test_endpoint if {
	count(weak_key.deny) == 1 with input as endpoint(true, "RSA", 1024)
	count(weak_key.deny) == 0 with input as endpoint(false, "RSA", 1024)
}

test_minimum_from_config if {
	count(weak_key.deny) == 1 with input as acm("RSA", 2048) with data.warden.config.min_rsa_bits as 3072
	count(weak_key.deny) == 0 with input as acm("EC", 224) with data.warden.config.min_ec_bits as 224
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := {"resource": object.union(acm("RSA", 1024).resource, {"uid": "arn:aws:acm:eu-west-1:111111111111:certificate/0d7e"})}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in weak_key.deny with input as given}
	count(want) > 0
	{v.msg | some v in weak_key.deny with input as json.remove(given, ["resource/name"])} == want
}
