# METADATA
# title: Firewall rule opens Kafka to the internet
# description: A Kafka broker (9092) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) usually has no authentication on its plaintext listener, so anyone can read every topic and write into it. Let only producers and consumers in the network reach it. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-014
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.kafka_open

import data.warden.lib.net

service_ports := {9092}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "Kafka") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
