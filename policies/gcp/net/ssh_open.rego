# METADATA
# title: Firewall rule opens SSH to the internet
# description: Port 22 reachable from 0.0.0.0/0 or ::/0 invites brute force and exploits against the SSH daemon; use IAP TCP forwarding or a bastion instead.
# custom:
#   id: WARDEN-GCP-NET-001
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {cis-gcp-2.0: ["3.6"], nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.ssh_open

import data.warden.lib.net

attrs := input.resource.attributes

deny contains violation if {
	net.firewall_open_to_internet(attrs)
	exposing := [net.describe(entry) | some entry in attrs.allowed; net.covers_port(entry, 22)]
	count(exposing) > 0
	violation := {"msg": sprintf(
		"firewall rule %s on network %s allows %s from %s: SSH (22) is open to the internet",
		[input.resource.name, attrs.network, concat(", ", exposing), concat(", ", sort(net.internet_ranges(attrs)))],
	)}
}
