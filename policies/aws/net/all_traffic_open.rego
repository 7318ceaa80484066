# METADATA
# title: Security group opens all protocols or all ports to the internet
# description: A rule admitting every protocol, or every port of a protocol, from the internet (any public range of /24 or wider, /48 for IPv6) exposes every service on the instances behind it, administration ports included.
# custom:
#   id: WARDEN-AWS-NET-003
#   severity: critical
#   resource_types: [aws.ec2.security_group]
#   frameworks: {cis-aws-3.0: ["5.2", "5.3"], nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: high, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_all_ports]
package warden.aws.net.all_traffic_open

import data.warden.lib.net

# net.internet_ingress (the rules open to the internet, with their port ranges) is computed
# once per security group and shared by every policy of the type.
deny contains violation if {
	some open in net.internet_ingress

	# net.all_traffic: every protocol, or every port of one
	true in [open.protocol == "all", open.all_ports]
	rule := open.rule
	violation := {
		"msg": sprintf(
			"%s allows %s from %s: every port is open to the internet%s",
			[net.security_group_label, net.describe(rule), net.cidr_text(rule.cidr), net.security_group_exposure],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
