package warden.certs.weak_chain_test

import data.warden.certs.weak_chain as policy

leaf := {
	"subject": "CN=pay.acme.example",
	"issuer": "CN=Acme Legacy Issuing CA",
	"serial": "0a1b",
	"not_before": "2026-06-01T00:00:00Z",
	"not_after": "2027-06-01T00:00:00Z",
	"key_algorithm": "EC",
	"key_size": 256,
	"signature_algorithm": "SHA256-RSA",
	"self_signed": false,
	"is_ca": false,
}

intermediate(signature, algorithm, size) := {
	"subject": "CN=Acme Legacy Issuing CA",
	"issuer": "CN=Acme Root CA 2009",
	"serial": "5f3e",
	"not_before": "2019-01-01T00:00:00Z",
	"not_after": "2029-01-01T00:00:00Z",
	"key_algorithm": algorithm,
	"key_size": size,
	"signature_algorithm": signature,
	"self_signed": false,
	"is_ca": true,
}

root(signature) := {
	"subject": "CN=Acme Root CA 2009",
	"issuer": "CN=Acme Root CA 2009",
	"serial": "01",
	"not_before": "2009-01-01T00:00:00Z",
	"not_after": "2034-01-01T00:00:00Z",
	"key_algorithm": "RSA",
	"key_size": 4096,
	"signature_algorithm": signature,
	"self_signed": true,
	"is_ca": true,
}

endpoint(reachable, chain) := {"resource": {
	"uid": "tls://pay.acme.example:443",
	"type": "tls.endpoint",
	"name": "pay.acme.example:443",
	"attributes": {"host": "pay.acme.example", "port": 443, "reachable": reachable, "certificate": leaf, "chain": chain},
}}

test_sha1_intermediate if {
	policy.deny == {{
		"msg": "endpoint pay.acme.example:443 sends chain certificate 1 (CN=Acme Legacy Issuing CA) that is signed with SHA1-RSA",
		"key": "5f3e/signature",
	}} with input as endpoint(true, [intermediate("SHA1-RSA", "RSA", 2048), root("SHA1-RSA")])
}

test_weak_intermediate_key if {
	{v.msg | some v in policy.deny} == {"endpoint pay.acme.example:443 sends chain certificate 1 (CN=Acme Legacy Issuing CA) that has a weak RSA-1024 key (minimum 2048 bits)"} with input as endpoint(true, [intermediate("SHA256-RSA", "RSA", 1024)])
}

test_weak_root_key_counts if {
	weak_root := object.union(root("SHA256-RSA"), {"key_size": 1024})
	count(policy.deny) == 1 with input as endpoint(true, [intermediate("SHA256-RSA", "RSA", 2048), weak_root])
}

test_near_miss_strong_chain_and_sha1_self_signed_root if {
	count(policy.deny) == 0 with input as endpoint(true, [intermediate("SHA256-RSA", "RSA", 2048), root("SHA1-RSA")])
	count(policy.deny) == 0 with input as endpoint(true, [intermediate("ECDSA-SHA384", "EC", 384)])
	count(policy.deny) == 0 with input as endpoint(true, [])
}

test_near_miss_unreachable_or_no_chain if {
	count(policy.deny) == 0 with input as endpoint(false, [intermediate("SHA1-RSA", "RSA", 1024)])
	count(policy.deny) == 0 with input as json.remove(endpoint(true, []), ["resource/attributes/chain"])
}

test_threshold_from_config if {
	count(policy.deny) == 1 with input as endpoint(true, [intermediate("SHA256-RSA", "RSA", 2048)]) with data.warden.config.min_rsa_bits as 3072
}

# --- messages never decide a violation -------------------------------------------

test_chain_certificate_without_subject_or_serial_still_violates if {
	bare := json.remove(intermediate("SHA1-RSA", "RSA", 2048), ["subject", "serial"])
	policy.deny == {{
		"msg": "endpoint tls://pay.acme.example:443 sends chain certificate 1 (without a subject) that is signed with SHA1-RSA",
		"key": "position 1/signature",
	}} with input as json.remove(endpoint(true, [bare]), ["resource/name"])
}
