# METADATA
# title: Security group opens SMB or NetBIOS to the internet
# description: SMB (445) and NetBIOS (137-139) reachable from the internet (any public range of /24 or wider, /48 for IPv6) are how worms such as WannaCry spread and how file shares and NTLM hashes leak; Windows file sharing belongs on a private network or VPN. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-009
#   severity: critical
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
package warden.aws.net.smb_open

import data.warden.lib.net

service_ports := {137, 138, 139, 445}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "SMB/NetBIOS") if {
	some exposure in net.aws_service_exposures(service_ports)
}
