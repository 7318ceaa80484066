# METADATA
# title: Security group opens plaintext POP3 or IMAP to the internet
# description: POP3 (110) and IMAP (143) without TLS carry mailbox passwords in clear text and are sprayed by credential-stuffing bots when reachable from the internet (any public range of /24 or wider, /48 for IPv6); serve POP3S (995) and IMAPS (993) instead. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-010
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
package warden.aws.net.mail_plaintext_open

import data.warden.lib.net

service_ports := {110, 143}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "plaintext POP3/IMAP") if {
	some exposure in net.aws_service_exposures(service_ports)
}
