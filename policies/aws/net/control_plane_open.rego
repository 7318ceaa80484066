# METADATA
# title: Security group opens a container or cluster control plane to the internet
# description: The Docker API (2375, 2376), the Kubernetes API server (6443) and the kubelet (10250) reachable from the internet (any public range of /24 or wider, /48 for IPv6) are hunted by cryptominer botnets, and an unauthenticated Docker socket or kubelet is root on the host. Reach them through a VPN, bastion or private endpoint. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-017
#   severity: critical
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
package warden.aws.net.control_plane_open

import data.warden.lib.net

service_ports := {2375, 2376, 6443, 10250}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "a container or cluster control plane") if {
	some exposure in net.aws_service_exposures(service_ports)
}
