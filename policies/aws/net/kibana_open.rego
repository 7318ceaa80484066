# METADATA
# title: Security group opens Kibana to the internet
# description: Kibana (5601) reachable from the internet (any public range of /24 or wider, /48 for IPv6) shows every indexed log and document to whoever finds it, and has had remote-code-execution flaws; put it behind an authenticating proxy. Elasticsearch itself (9200, 9300) is a database port (WARDEN-AWS-NET-004). A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-013
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_elasticsearch_kibana_9200_9300_5601]
package warden.aws.net.kibana_open

import data.warden.lib.net

service_ports := {5601}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "Kibana") if {
	some exposure in net.aws_service_exposures(service_ports)
}
