# METADATA
# title: Firewall rule opens all protocols or all ports to the internet
# description: A rule admitting every protocol, or every port of a protocol, from 0.0.0.0/0 or ::/0 exposes every service on the instances it targets, administration ports included.
# custom:
#   id: WARDEN-GCP-NET-003
#   severity: critical
#   resource_types: [gcp.compute.firewall]
#   frameworks: {cis-gcp-2.0: ["3.6", "3.7"], nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: high}
package warden.gcp.net.all_traffic_open

import data.warden.lib.net

attrs := input.resource.attributes

deny contains violation if {
	net.firewall_open_to_internet(attrs)
	exposing := [net.describe(entry) | some entry in attrs.allowed; net.all_traffic(entry)]
	count(exposing) > 0
	violation := {"msg": sprintf(
		"firewall rule %s on network %s allows %s from %s: every port is open to the internet",
		[input.resource.name, attrs.network, concat(", ", exposing), concat(", ", sort(net.internet_ranges(attrs)))],
	)}
}
