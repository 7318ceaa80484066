# METADATA
# title: Endpoint's certificate chain is self-signed or untrusted
# description: Clients cannot tell an untrusted certificate from an attacker's, so they either fail or are configured to skip verification. No fix is automated because an incomplete chain is the server's own configuration and a private CA may be intended, which only the endpoint's operator knows.
# custom:
#   id: WARDEN-CERT-005
#   severity: medium
#   resource_types: [tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-8", "SC-17"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.untrusted_chain

import data.warden.lib.certs

attrs := input.resource.attributes

# certs.probed(input.resource), as equalities that OPA's rule index checks without
# evaluating the rule.
deny contains violation if {
	input.resource.attributes.trusted == false
	input.resource.type == "tls.endpoint"
	input.resource.attributes.reachable == true
	violation := {
		"msg": sprintf("%s presents %s%s", [certs.resource_label, kind, because]),
		"self_signed": self_signed,
	}
}

self_signed := object.get(attrs, ["certificate", "self_signed"], false) == true

kind := "a self-signed certificate" if self_signed

kind := "a certificate chain that is not trusted" if not self_signed

because := sprintf(" (%s)", [attrs.verify_error]) if {
	is_string(attrs.verify_error)
	attrs.verify_error != ""
} else := ""
