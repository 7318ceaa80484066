package warden.lib.certs_test

import data.warden.lib.certs

# 2026-11-30T12:00:00Z
now := 1796040000000000000

cert(overrides) := object.union(
	{
		"subject": "CN=shop.acme.example",
		"not_after": "2027-06-01T00:00:00Z",
		"key_algorithm": "RSA",
		"key_size": 2048,
		"signature_algorithm": "SHA256-RSA",
	},
	overrides,
)

endpoint(attrs) := {
	"uid": "tls://shop.acme.example:443",
	"type": "tls.endpoint",
	"name": "shop.acme.example:443",
	"attributes": attrs,
}

test_certificate_of_a_reached_endpoint if {
	certs.certificate(endpoint({"reachable": true, "certificate": cert({})})) == cert({})
}

test_no_certificate_for_an_unreachable_endpoint if {
	not certs.certificate(endpoint({"reachable": false, "certificate": cert({})}))
	not certs.probed(endpoint({"reachable": false}))
}

test_no_certificate_when_null if {
	not certs.certificate({"type": "aws.acm.certificate", "attributes": {"certificate": null}})
}

test_expired if {
	certs.expired(cert({"not_after": "2026-11-30T11:59:59Z"})) with time.now_ns as now
	not certs.expired(cert({"not_after": "2026-11-30T12:00:00Z"})) with time.now_ns as now
}

test_expires_within if {
	certs.expires_within(cert({"not_after": "2026-12-30T11:59:59Z"}), 30) with time.now_ns as now
	not certs.expires_within(cert({"not_after": "2026-12-30T12:00:00Z"}), 30) with time.now_ns as now
	not certs.expires_within(cert({"not_after": "2026-11-29T00:00:00Z"}), 30) with time.now_ns as now
}

test_weak_rsa_key if {
	certs.weak_key(cert({"key_size": 1024}), 2048, 256) == "RSA-1024 key (minimum 2048 bits)"
	not certs.weak_key(cert({"key_size": 2048}), 2048, 256)
}

test_weak_ec_key if {
	certs.weak_key(cert({"key_algorithm": "EC", "key_size": 224}), 2048, 256) == "EC-224 key (minimum 256 bits)"
	not certs.weak_key(cert({"key_algorithm": "EC", "key_size": 256}), 2048, 256)
}

test_dsa_always_weak_ed25519_never if {
	certs.weak_key(cert({"key_algorithm": "DSA", "key_size": 3072}), 2048, 256) == "DSA key"
	not certs.weak_key(cert({"key_algorithm": "ED25519", "key_size": 256}), 2048, 256)
}

test_unknown_key_size_is_not_judged if {
	not certs.weak_key(cert({"key_size": null}), 2048, 256)
}

test_weak_signature if {
	certs.weak_signature(cert({"signature_algorithm": "SHA1-RSA"}))
	certs.weak_signature(cert({"signature_algorithm": "ECDSA-SHA1"}))
	certs.weak_signature(cert({"signature_algorithm": "MD5-RSA"}))
	not certs.weak_signature(cert({"signature_algorithm": "SHA256-RSA"}))
	not certs.weak_signature(cert({"signature_algorithm": "SHA256-RSAPSS"}))
	not certs.weak_signature(cert({"signature_algorithm": "Ed25519"}))
}

test_label if {
	certs.label(endpoint({})) == "endpoint shop.acme.example:443"
	certs.label({"type": "x.y", "name": "z"}) == "z"
	certs.cert_label(endpoint({})) == "the certificate of endpoint shop.acme.example:443"
	certs.cert_label({"type": "aws.acm.certificate", "name": "shop.acme.example"}) == "ACM certificate shop.acme.example"
}

test_label_without_name_is_the_uid if {
	certs.label({"type": "aws.acm.certificate", "uid": "arn:aws:acm:eu-west-1:1:certificate/x"}) == "ACM certificate arn:aws:acm:eu-west-1:1:certificate/x"
	certs.cert_label({"type": "tls.endpoint", "uid": "tls://a:443", "name": ""}) == "the certificate of endpoint tls://a:443"
	certs.resource_label == "ACM certificate arn:aws:acm:eu-west-1:1:certificate/x" with input as {"resource": {"type": "aws.acm.certificate", "uid": "arn:aws:acm:eu-west-1:1:certificate/x"}}
}

# --- the resource being evaluated: shared rules ------------------------------

resources := [
	endpoint({"reachable": true, "certificate": cert({})}),
	endpoint({"reachable": false, "certificate": cert({})}),
	endpoint({"certificate": cert({})}),
	endpoint({"reachable": true, "certificate": null}),
	{"type": "aws.acm.certificate", "name": "shop.acme.example", "attributes": {"certificate": cert({"not_after": "2026-11-30T11:59:59Z"})}},
	{"type": "aws.acm.certificate", "name": "shop.acme.example", "attributes": {"certificate": cert({"not_after": "2026-11-30T12:00:00Z"})}},
	{"type": "aws.iam.server_certificate", "name": "legacy", "attributes": {"certificate": cert({"not_after": null})}},
	{"type": "gcp.compute.ssl_certificate", "name": "lb", "attributes": {"certificate": cert({"not_after": "soon"})}},
	{"type": "gcp.compute.ssl_certificate", "name": "lb", "attributes": {}},
	{"type": "x.y", "name": "z", "attributes": {"certificate": "PEM"}},
	{"type": "aws.acm.certificate", "uid": "arn:aws:acm:eu-west-1:1:certificate/x", "attributes": {"certificate": cert({})}},
	{"type": "tls.endpoint", "uid": "tls://a:443", "attributes": {"reachable": true, "certificate": cert({})}},
]

shared_rules_agree if {
	every r in resources {
		count({c | c := certs.resource_certificate}) == count({c | c := certs.certificate(r)}) with input as {"resource": r}
		every c in {c | c := certs.certificate(r)} {
			certs.resource_certificate == c with input as {"resource": r}
			count({1 | certs.resource_expired}) == count({1 | certs.expired(c)}) with input as {"resource": r}
		}
		certs.resource_label == certs.label(r) with input as {"resource": r}
		certs.resource_cert_label == certs.cert_label(r) with input as {"resource": r}
	}
}

test_shared_rules_read_the_resource_as_the_functions_do if {
	shared_rules_agree with time.now_ns as now
}

test_resource_expired_at_the_instant if {
	certs.resource_expired with input as {"resource": resources[4]} with time.now_ns as now
	not certs.resource_expired with input as {"resource": resources[5]} with time.now_ns as now
}

test_certificate_without_expiry_is_neither_expired_nor_expiring if {
	c := cert({"not_after": "9999-12-31T23:59:59Z"})
	not certs.expired(c) with time.now_ns as now
	not certs.expires_within(c, 30) with time.now_ns as now
	r := {"type": "aws.acm.certificate", "uid": "arn:aws:acm:eu-west-1:1:certificate/x", "attributes": {"certificate": c}}
	not certs.resource_not_after_ns with input as {"resource": r}
	not certs.resource_expired with input as {"resource": r} with time.now_ns as now
}
