# METADATA
# title: Security group opens Telnet to the internet
# description: Telnet (23) sends logins and sessions in clear text and its daemons are old and exploited by botnets such as Mirai; reachable from the internet (any public range of /24 or wider, /48 for IPv6) it hands credentials to anyone on the path. Use SSH through a bastion or SSM instead. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-007
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2", "2.2.7"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_telnet_23]
package warden.aws.net.telnet_open

import data.warden.lib.net

service_ports := {23}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "Telnet") if {
	some exposure in net.aws_service_exposures(service_ports)
}
