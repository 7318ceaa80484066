# METADATA
# title: Firewall rule opens FTP to the internet
# description: FTP (20, 21) sends credentials and files in clear text and anonymous or weak logins are routinely harvested; reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) it leaks whatever it serves. Use SFTP or Cloud Storage signed URLs instead. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-008
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.ftp_open

import data.warden.lib.net

service_ports := {20, 21}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "FTP") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
