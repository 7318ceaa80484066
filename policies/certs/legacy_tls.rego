# METADATA
# title: Endpoint accepts TLS older than 1.2
# description: TLS 1.0 and 1.1 rely on broken constructions (CBC padding, SHA-1/MD5 handshakes) and are deprecated by RFC 8996; disable them. No fix is automated because protocol versions are server configuration that warden does not manage, and the old clients still using them would break.
# custom:
#   id: WARDEN-CERT-007
#   severity: medium
#   resource_types: [tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-8", "SC-13"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.legacy_tls

import data.warden.lib.certs

legacy_versions := {"SSL2.0", "SSL3.0", "TLS1.0", "TLS1.1"}

# certs.probed(input.resource), as equalities that OPA's rule index checks without
# evaluating the rule; the list of versions is built for a violation only.
deny contains violation if {
	input.resource.type == "tls.endpoint"
	input.resource.attributes.reachable == true
	legacy := legacy_versions
	some version in input.resource.attributes.protocols
	version in legacy
	violation := {
		"msg": sprintf("%s accepts %s", [certs.resource_label, concat(", ", accepted)]),
		"protocols": accepted,
	}
}

accepted := sort([version |
	some version in object.get(input.resource.attributes, "protocols", [])
	version in legacy_versions
])
