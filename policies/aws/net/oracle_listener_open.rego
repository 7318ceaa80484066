# METADATA
# title: Security group opens the Oracle TLS and XDB listeners to the internet
# description: The Oracle listener's TCPS (2484) and alternative (2483) ports reachable from the internet (any public range of /24 or wider, /48 for IPv6) expose the database to TNS poisoning and password guessing just as 1521 does (a database port, WARDEN-AWS-NET-004). A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-014
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_oracle_1521_2483]
package warden.aws.net.oracle_listener_open

import data.warden.lib.net

service_ports := {2483, 2484}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "Oracle listener") if {
	some exposure in net.aws_service_exposures(service_ports)
}
