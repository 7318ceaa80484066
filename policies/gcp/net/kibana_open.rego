# METADATA
# title: Firewall rule opens Kibana to the internet
# description: Kibana (5601) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) shows every indexed log and document to whoever finds it and has had remote-code-execution flaws; put it behind IAP or an authenticating proxy. Elasticsearch itself (9200, 9300) is a database port (WARDEN-GCP-NET-004). A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-016
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.kibana_open

import data.warden.lib.net

service_ports := {5601}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "Kibana") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
