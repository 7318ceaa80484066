# METADATA
# title: Firewall rule opens a high-risk port to the internet
# description: Prowler's high-risk TCP ports (SMTP 25, MS RPC 135, and the development servers and admin consoles on 3000, 4333, 5000, 5500, 8080, 8088; setting high_risk_ports) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) run services rarely hardened for it. Ports with their own policy (Telnet, FTP, SMB/NetBIOS, POP3/IMAP) are reported there. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-011
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.high_risk_port_open

import data.warden.lib.net

# Read only when a firewall rule is open to the internet.
service_ports := {p | some p in net.high_risk_ports; not p in net.dedicated_service_ports}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "a high-risk port") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
