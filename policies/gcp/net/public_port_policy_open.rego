# METADATA
# title: Firewall rule opens a non-public port to the internet
# description: Only the ports a service is meant to publish (setting public_ports, default 80 and 443) should be reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges); any other port open to it is an admin, debug or back-end service that scanners will find. Ports that a policy of their own reports (SSH, RDP, database, high-risk and the named services) are left to it, so that one exposure is one finding. Entries admitting every port are WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-018
#   severity: medium
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.public_port_policy_open

import data.warden.lib.net

deny contains violation if {
	input.resource.attributes.direction == "INGRESS"
	other := [[open.entry, ranges] |
		some open in net.firewall_internet_allowed
		open.all_ports == false
		ranges := net.non_public_ranges(open.ranges)
		count(ranges) > 0
	]
	count(other) > 0
	violation := {"msg": sprintf(
		"%s allows %s from %s: ports %s are open to the internet but are not public ports (%s) and no other policy names them%s",
		[
			net.firewall_label,
			concat(", ", [net.describe(entry) | some [entry, _] in other]),
			net.firewall_internet_sources_text,
			concat(", ", [sprintf("%s %s", [net.protocol(entry), concat(",", [net.range_text(r) | some r in ranges])]) | some [entry, ranges] in other]),
			net.ports_text(net.public_ports),
			net.firewall_exposure,
		],
	)}
}
