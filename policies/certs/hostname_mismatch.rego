# METADATA
# title: Endpoint's certificate does not match its host name
# description: A certificate issued for another name fails verification in every client, or teaches clients to disable host-name checks. No fix is automated because the right certificate may already exist and be deployed to the wrong place, or the name may point at the wrong server; the endpoint's operator decides.
# custom:
#   id: WARDEN-CERT-006
#   severity: high
#   resource_types: [tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-8", "SC-23"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.hostname_mismatch

import data.warden.lib.certs
import data.warden.lib.display

attrs := input.resource.attributes

# certs.probed(input.resource), as equalities that OPA's rule index checks without
# evaluating the rule.
deny contains violation if {
	input.resource.attributes.hostname_match == false
	input.resource.type == "tls.endpoint"
	input.resource.attributes.reachable == true
	violation := {"msg": sprintf(
		"%s presents a certificate for %s, not %s",
		[certs.resource_label, presented_names, server_name],
	)}
}

# The name the probe asked for: the SNI, else the host, else the resource's name (a
# message never decides a violation).
server_name := display.attribute("sni", display.attribute("host", display.name))

presented_names := concat(", ", names) if {
	names := object.get(attrs, ["certificate", "dns_names"], [])
	count(names) > 0
} else := object.get(attrs, ["certificate", "subject"], "another name")
