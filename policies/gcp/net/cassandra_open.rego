# METADATA
# title: Firewall rule opens Cassandra management ports to the internet
# description: Cassandra's JMX (7199), Thrift (9160) and OpsCenter (8888) ports reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) let anyone manage the cluster or read its data, JMX often without a password; 9042 and 7000/7001 are database ports (WARDEN-GCP-NET-004). A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-015
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.cassandra_open

import data.warden.lib.net

service_ports := {7199, 8888, 9160}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "Cassandra") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
