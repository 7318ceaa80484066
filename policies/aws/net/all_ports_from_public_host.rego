# METADATA
# title: Security group opens every port to a single public address
# description: A rule admitting every protocol or port from a specific public address or narrow public range (narrower than the internet settings) trusts that address with every service on the instances; home and office addresses change hands and are spoofed on UDP, so open the ports it needs only. Every port open to the internet is WARDEN-AWS-NET-003's finding.
# custom:
#   id: WARDEN-AWS-NET-020
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.3.1", "1.2.5"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_any_port_from_ip]
package warden.aws.net.all_ports_from_public_host

import data.warden.lib.net

deny contains violation if {
	some rule in input.resource.attributes.ingress

	# the cheap test first: few rules admit every port, and a range costs more to judge
	net.all_traffic(rule)
	net.has_cidr(rule)
	info := net.range_info(rule.cidr)
	info.valid
	info.public
	not info.internet
	violation := {
		"msg": sprintf(
			"%s allows %s from the public range %s: every port is open to that address%s",
			[net.security_group_label, net.describe(rule), net.cidr_text(rule.cidr), net.security_group_exposure],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
