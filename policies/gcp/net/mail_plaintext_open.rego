# METADATA
# title: Firewall rule opens plaintext POP3 or IMAP to the internet
# description: POP3 (110) and IMAP (143) without TLS carry mailbox passwords in clear text and are sprayed by credential-stuffing bots when reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges); serve POP3S (995) and IMAPS (993) instead. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-010
#   severity: medium
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.mail_plaintext_open

import data.warden.lib.net

service_ports := {110, 143}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "plaintext POP3/IMAP") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
