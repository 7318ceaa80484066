# METADATA
# title: Security group opens a non-public port to the internet
# description: Only the ports a service is meant to publish (setting public_ports, default 80 and 443) should be reachable from the internet (any public range of /24 or wider, /48 for IPv6); any other port open to it is an admin, debug or back-end service that scanners will find. Ports that a policy of their own reports (SSH, RDP, database, high-risk and the named services) are left to it, so that one exposure is one finding. Rules admitting every port are WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-019
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_any_port]
package warden.aws.net.public_port_policy_open

import data.warden.lib.net

deny contains violation if {
	some open in net.internet_ingress

	# every port is WARDEN-AWS-NET-003's finding
	open.all_ports == false
	count(open.ranges) > 0
	other := net.non_public_ranges(open.ranges)
	count(other) > 0
	rule := open.rule
	violation := {
		"msg": sprintf(
			"%s allows %s from %s: ports %s are open to the internet but are not public ports (%s) and no other policy names them%s",
			[
				net.security_group_label, net.describe(rule), net.cidr_text(rule.cidr),
				concat(",", [net.range_text(r) | some r in other]),
				net.ports_text(net.public_ports),
				net.security_group_exposure,
			],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
