# METADATA
# title: Security group opens a high-risk port to the internet
# description: Prowler's high-risk TCP ports (SMTP 25, MS RPC 135, and the development servers and admin consoles on 3000, 4333, 5000, 5500, 8080, 8088; setting high_risk_ports) reachable from the internet (any public range of /24 or wider, /48 for IPv6) run services that are rarely hardened for it, open relays and debug consoles among them. Ports with their own policy (Telnet, FTP, SMB/NetBIOS, POP3/IMAP) are reported there, and a rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-016
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_high_risk_tcp_ports]
package warden.aws.net.high_risk_port_open

import data.warden.lib.net

# Read only when a rule is open to the internet.
ports := {p | some p in net.high_risk_ports; not p in net.dedicated_service_ports}

deny contains net.aws_service_violation(exposure, "a high-risk port") if {
	some exposure in net.aws_service_exposures(ports)
}
