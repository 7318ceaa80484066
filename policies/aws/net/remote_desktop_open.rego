# METADATA
# title: Security group opens VNC or X11 to the internet
# description: VNC (5900-5903) and X11 (6000) reachable from the internet (any public range of /24 or wider, /48 for IPv6) give a remote desktop often protected by a short password or none, and X11 lets anyone read keystrokes; tunnel them over SSH or a VPN instead. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-018
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
package warden.aws.net.remote_desktop_open

import data.warden.lib.net

service_ports := {5900, 5901, 5902, 5903, 6000}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "VNC/X11") if {
	some exposure in net.aws_service_exposures(service_ports)
}
