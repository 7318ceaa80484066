# METADATA
# title: Security group opens the SQL Server Browser to the internet
# description: The SQL Server Browser (1434) answers anyone with every instance and port on the host, and was how the Slammer worm spread; reachable from the internet (any public range of /24 or wider, /48 for IPv6) it maps the database for attackers. SQL Server itself (1433) is a database port (WARDEN-AWS-NET-004). A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-015
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_sql_server_1433_1434]
package warden.aws.net.sql_server_browser_open

import data.warden.lib.net

service_ports := {1434}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "SQL Server Browser") if {
	some exposure in net.aws_service_exposures(service_ports)
}
