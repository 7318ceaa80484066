# METADATA
# title: Firewall rule opens SMB or NetBIOS to the internet
# description: SMB (445) and NetBIOS (137-139) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) are how worms such as WannaCry spread and how file shares and NTLM hashes leak; Windows file sharing belongs on a private network or VPN. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-009
#   severity: critical
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.smb_open

import data.warden.lib.net

service_ports := {137, 138, 139, 445}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "SMB/NetBIOS") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
