package warden.certs.legacy_tls_test

import data.warden.certs.legacy_tls

endpoint(reachable, protocols) := {"resource": {
	"uid": "tls://legacy-portal.acme.example:443",
	"type": "tls.endpoint",
	"name": "legacy-portal.acme.example:443",
	"attributes": {"host": "legacy-portal.acme.example", "port": 443, "reachable": reachable, "protocols": protocols},
}}

test_accepts_tls10_and_tls11 if {
	legacy_tls.deny == {{
		"msg": "endpoint legacy-portal.acme.example:443 accepts TLS1.0, TLS1.1",
		"protocols": ["TLS1.0", "TLS1.1"],
	}} with input as endpoint(true, ["TLS1.2", "TLS1.1", "TLS1.0"])
}

test_accepts_tls11_only_legacy if {
	count(legacy_tls.deny) == 1 with input as endpoint(true, ["TLS1.1", "TLS1.2", "TLS1.3"])
}

test_tls12_minimum_is_a_near_miss if {
	count(legacy_tls.deny) == 0 with input as endpoint(true, ["TLS1.2"])
	count(legacy_tls.deny) == 0 with input as endpoint(true, ["TLS1.2", "TLS1.3"])
}

test_unreachable_endpoint_is_not_judged if {
	count(legacy_tls.deny) == 0 with input as endpoint(false, ["TLS1.0"])
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := endpoint(true, ["TLS1.0", "TLS1.2"])
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in legacy_tls.deny with input as given}
	count(want) > 0
	{v.msg | some v in legacy_tls.deny with input as json.remove(given, ["resource/name"])} == want
}
