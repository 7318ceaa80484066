package warden.certs.hostname_mismatch_test

import data.warden.certs.hostname_mismatch

endpoint(overrides) := {"resource": {
	"uid": "tls://mail.acme.example:443",
	"type": "tls.endpoint",
	"name": "mail.acme.example:443",
	"attributes": object.union(
		{
			"host": "mail.acme.example",
			"port": 443,
			"sni": "mail.acme.example",
			"reachable": true,
			"certificate": {"subject": "CN=webmail.acme.example", "dns_names": ["webmail.acme.example"]},
			"trusted": true,
			"hostname_match": false,
		},
		overrides,
	),
}}

test_mismatch if {
	hostname_mismatch.deny == {{"msg": "endpoint mail.acme.example:443 presents a certificate for webmail.acme.example, not mail.acme.example"}} with input as endpoint({})
}

test_mismatch_without_dns_names_names_the_subject if {
	hostname_mismatch.deny == {{"msg": "endpoint mail.acme.example:443 presents a certificate for CN=webmail.acme.example, not mail.acme.example"}} with input as endpoint({"certificate": {"dns_names": []}, "sni": ""})
}

test_match_is_a_near_miss if {
	count(hostname_mismatch.deny) == 0 with input as endpoint({"hostname_match": true})
}

test_unreachable_endpoint_is_not_judged if {
	count(hostname_mismatch.deny) == 0 with input as endpoint({"reachable": false, "certificate": null})
}

# --- messages never decide a violation -------------------------------------------

test_endpoint_without_sni_host_or_name_still_violates if {
	hostname_mismatch.deny == {{"msg": "endpoint mail.acme.example:443 presents a certificate for webmail.acme.example, not mail.acme.example:443"}} with input as json.remove(endpoint({}), ["resource/attributes/sni", "resource/attributes/host"])
	hostname_mismatch.deny == {{"msg": "endpoint tls://mail.acme.example:443 presents a certificate for webmail.acme.example, not tls://mail.acme.example:443"}} with input as json.remove(endpoint({}), ["resource/name", "resource/attributes/sni", "resource/attributes/host"])
}
