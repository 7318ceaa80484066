# METADATA
# title: Security group opens a wide port range to the internet
# description: A tcp or udp range of more than 100 ports open to 0.0.0.0/0 or ::/0 exposes whatever starts listening in it; open only the ports a service needs.
# custom:
#   id: WARDEN-AWS-NET-006
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium}
package warden.aws.net.port_range_open

import data.warden.lib.config
import data.warden.lib.net

max_ports := config.setting("max_open_port_range", 100)

deny contains violation if {
	some rule in input.resource.attributes.ingress
	net.protocol(rule) in {"tcp", "udp"}
	net.open_to_internet(rule)

	# every port is WARDEN-AWS-NET-003's finding
	not net.all_ports(rule)
	some range in net.port_ranges(rule)
	net.range_size(range) > max_ports
	violation := {
		"msg": sprintf(
			"security group %s (%s) allows %s from %s: %d ports open to the internet (at most %d)",
			[input.resource.name, input.resource.attributes.group_id, net.describe(rule), rule.cidr, net.range_size(range), max_ports],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
