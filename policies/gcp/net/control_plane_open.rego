# METADATA
# title: Firewall rule opens a container or cluster control plane to the internet
# description: The Docker API (2375, 2376), the Kubernetes API server (6443) and the kubelet (10250) reachable from the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) are hunted by cryptominer botnets, and an unauthenticated Docker socket or kubelet is root on the host. Reach them through IAP, a VPN or a private endpoint. A rule admitting every port is WARDEN-GCP-NET-003's finding.
# custom:
#   id: WARDEN-GCP-NET-012
#   severity: critical
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.control_plane_open

import data.warden.lib.net

service_ports := {2375, 2376, 6443, 10250}

# direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains net.firewall_service_violation(service_ports, exposed, "a container or cluster control plane") if {
	input.resource.attributes.direction == "INGRESS"
	exposed := net.firewall_service_ports(service_ports)
	count(exposed) > 0
}
