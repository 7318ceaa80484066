package warden.certs.untrusted_chain_test

import data.warden.certs.untrusted_chain

endpoint(overrides) := {"resource": {
	"uid": "tls://dev-dashboard.acme.example:8443",
	"type": "tls.endpoint",
	"name": "dev-dashboard.acme.example:8443",
	"account": "dev-dashboard.acme.example",
	"region": "",
	"attributes": object.union(
		{
			"host": "dev-dashboard.acme.example",
			"port": 8443,
			"reachable": true,
			"certificate": {"subject": "CN=dev-dashboard.acme.example", "issuer": "CN=dev-dashboard.acme.example", "self_signed": true},
			"trusted": false,
			"verify_error": "x509: certificate signed by unknown authority",
			"hostname_match": true,
		},
		overrides,
	),
}}

test_self_signed if {
	untrusted_chain.deny == {{
		"msg": "endpoint dev-dashboard.acme.example:8443 presents a self-signed certificate (x509: certificate signed by unknown authority)",
		"self_signed": true,
	}} with input as endpoint({})
}

test_untrusted_chain if {
	untrusted_chain.deny == {{
		"msg": "endpoint dev-dashboard.acme.example:8443 presents a certificate chain that is not trusted",
		"self_signed": false,
	}} with input as endpoint({"certificate": {"self_signed": false}, "verify_error": ""})
}

test_trusted_is_a_near_miss if {
	count(untrusted_chain.deny) == 0 with input as endpoint({"certificate": {"self_signed": false}, "trusted": true, "verify_error": ""})
}

test_unreachable_endpoint_is_not_judged if {
	count(untrusted_chain.deny) == 0 with input as endpoint({"reachable": false, "certificate": null, "verify_error": ""})
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := endpoint({})
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in untrusted_chain.deny with input as given}
	count(want) > 0
	{v.msg | some v in untrusted_chain.deny with input as json.remove(given, ["resource/name"])} == want
}
