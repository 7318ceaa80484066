# METADATA
# title: Security group opens RDP to the internet
# description: Port 3389 reachable from the internet (any public range of /24 or wider, /48 for IPv6) exposes Windows hosts to password spraying and RDP exploits; reach them through a bastion, VPN or Fleet Manager instead.
# custom:
#   id: WARDEN-AWS-NET-002
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {cis-aws-3.0: ["5.2", "5.3"], nist-800-53-r5: ["SC-7", "AC-17"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_3389]
package warden.aws.net.rdp_open

import data.warden.lib.net

# net.internet_ingress (the rules open to the internet, with their port ranges) is computed
# once per security group and shared by every policy of the type.
deny contains violation if {
	some open in net.internet_ingress
	some [from, to] in open.ranges
	from <= 3389
	3389 <= to
	rule := open.rule
	violation := {
		"msg": sprintf(
			"%s allows %s from %s: RDP (3389) is open to the internet%s",
			[net.security_group_label, net.describe(rule), net.cidr_text(rule.cidr), net.security_group_exposure],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
