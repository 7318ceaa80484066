# METADATA
# title: Firewall rule opens VNC or X11 to the internet
# description: VNC (5900-5903) and X11 (6000) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) give a remote desktop often protected by a short password or none, and X11 lets anyone read keystrokes; tunnel them over IAP or a VPN instead. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-013
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.remote_desktop_open

import data.warden.lib.net

service_ports := {5900, 5901, 5902, 5903, 6000}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "VNC/X11") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
