# METADATA
# title: Firewall rule opens Telnet to the internet
# description: Telnet (23) sends logins and sessions in clear text and its daemons are exploited by botnets such as Mirai; reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) it hands credentials to anyone on the path. Use SSH through IAP instead. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-007
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2", "2.2.7"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.telnet_open

import data.warden.lib.net

service_ports := {23}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "Telnet") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
