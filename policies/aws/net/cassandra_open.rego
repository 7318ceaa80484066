# METADATA
# title: Security group opens Cassandra management ports to the internet
# description: Cassandra's JMX (7199), Thrift (9160) and OpsCenter (8888) ports reachable from the internet (any public range of /24 or wider, /48 for IPv6) let anyone manage the cluster or read its data, JMX often without a password; 9042 and 7000/7001 are database ports (WARDEN-AWS-NET-004). A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-012
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_cassandra_7199_9160_8888]
package warden.aws.net.cassandra_open

import data.warden.lib.net

service_ports := {7199, 8888, 9160}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "Cassandra") if {
	some exposure in net.aws_service_exposures(service_ports)
}
