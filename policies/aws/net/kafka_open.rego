# METADATA
# title: Security group opens Kafka to the internet
# description: A Kafka broker (9092) reachable from the internet (any public range of /24 or wider, /48 for IPv6) usually has no authentication on its plaintext listener, so anyone can read every topic and write into it. Let only producers and consumers in the VPC reach it. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-011
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_kafka_9092]
package warden.aws.net.kafka_open

import data.warden.lib.net

service_ports := {9092}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "Kafka") if {
	some exposure in net.aws_service_exposures(service_ports)
}
