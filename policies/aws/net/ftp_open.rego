# METADATA
# title: Security group opens FTP to the internet
# description: FTP (20, 21) sends credentials and files in clear text and anonymous or weak logins are routinely harvested; reachable from the internet (any public range of /24 or wider, /48 for IPv6) it leaks whatever it serves. Use SFTP or S3 with signed URLs instead. A rule admitting every port is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-008
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "SC-8"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_ftp_20_21]
package warden.aws.net.ftp_open

import data.warden.lib.net

service_ports := {20, 21}

# One finding per rule that opens one of the ports to the internet.
deny contains net.aws_service_violation(exposure, "FTP") if {
	some exposure in net.aws_service_exposures(service_ports)
}
