# METADATA
# title: Firewall rule opens all protocols or all ports to the internet
# description: A rule admitting every protocol, or every port of a protocol, from the internet (any public range of /24 or wider, /48 for IPv6) exposes every service on the instances it targets, administration ports included.
# custom:
#   id: WARDEN-GCP-NET-003
#   severity: critical
#   resource_types: [gcp.compute.firewall]
#   frameworks: {cis-gcp-2.0: ["3.6", "3.7"], nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: high}
package warden.gcp.net.all_traffic_open

import data.warden.lib.net

# net.firewall_internet_allowed (the allowed entries of a firewall rule open to the
# internet, with their port ranges) is computed once per firewall rule and shared by every
# policy of the type. direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains violation if {
	input.resource.attributes.direction == "INGRESS"

	# net.all_traffic: every protocol, or every port of one
	exposing := [net.describe(open.entry) |
		some open in net.firewall_internet_allowed
		true in [open.protocol == "all", open.all_ports]
	]
	count(exposing) > 0
	violation := {"msg": sprintf(
		"%s allows %s from %s: every port is open to the internet%s",
		[net.firewall_label, concat(", ", exposing), net.firewall_internet_sources_text, net.firewall_exposure],
	)}
}
