# METADATA
# title: Security group opens a wide port range to the internet
# description: A tcp or udp range of more than 100 ports open to the internet (any public range of /24 or wider, /48 for IPv6) exposes whatever starts listening in it; open only the ports a service needs.
# custom:
#   id: WARDEN-AWS-NET-006
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
package warden.aws.net.port_range_open

import data.warden.lib.net

# Read only when a tcp or udp rule is open to the internet.
max_ports := n if {
	n := data.warden.config.max_open_port_range
} else := 100

# net.internet_ingress (the rules open to the internet, with their port ranges) is computed
# once per security group and shared by every policy of the type.
deny contains violation if {
	some open in net.internet_ingress
	open.protocol in {"tcp", "udp"}

	# every port is WARDEN-AWS-NET-003's finding
	open.all_ports == false
	some [from, to] in open.ranges
	size := (to - from) + 1
	size > max_ports
	rule := open.rule
	violation := {
		"msg": sprintf(
			"%s allows %s from %s: %d ports open to the internet (at most %d)%s",
			[net.security_group_label, net.describe(rule), net.cidr_text(rule.cidr), size, max_ports, net.security_group_exposure],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
