# METADATA
# title: Firewall rule opens RDP to the internet
# description: Port 3389 reachable from the internet (any public range of /24 or wider, /48 for IPv6) exposes Windows hosts to password spraying and RDP exploits; use IAP TCP forwarding or a bastion instead.
# custom:
#   id: WARDEN-GCP-NET-002
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {cis-gcp-2.0: ["3.7"], nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
#   prowler: [compute_firewall_rdp_access_from_the_internet_allowed]
package warden.gcp.net.rdp_open

import data.warden.lib.net

# net.firewall_internet_allowed (the allowed entries of a firewall rule open to the
# internet, with their port ranges) is computed once per firewall rule and shared by every
# policy of the type. direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains violation if {
	input.resource.attributes.direction == "INGRESS"
	some open in net.firewall_internet_allowed
	some [from, to] in open.ranges
	from <= 3389
	3389 <= to
	violation := {"msg": sprintf(
		"%s allows %s from %s: RDP (3389) is open to the internet%s",
		[net.firewall_label, concat(", ", exposing), net.firewall_internet_sources_text, net.firewall_exposure],
	)}
}

# The entries that admit the port, in order (computed for a violation only).
exposing := [net.describe(open.entry) |
	some open in net.firewall_internet_allowed
	net.in_ranges(open.ranges, 3389)
]
