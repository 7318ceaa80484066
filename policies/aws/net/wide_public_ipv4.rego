# METADATA
# title: Security group has a rule with a wide public IPv4 range
# description: A public IPv4 range of /1 to /23 in an ingress or egress rule admits or reaches millions of addresses that nobody owns as one peer, usually a typo for a /32 or a shortcut for "the internet"; name the hosts or use a prefix list. 0.0.0.0/0 is left to the port policies (ingress) and is the usual egress default. No automated fix is safe since revoking a rule that a peer relies on can cut a service off and the narrower range meant cannot be guessed.
# custom:
#   id: WARDEN-AWS-NET-021
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.3.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: notify, risk: none}
#   prowler: [ec2_securitygroup_allow_wide_open_public_ipv4]
package warden.aws.net.wide_public_ipv4

import data.warden.lib.net

peer_word := {"ingress": "from", "egress": "to"}

deny contains violation if {
	some direction in ["ingress", "egress"]
	some rule in object.get(input.resource.attributes, direction, [])
	net.has_cidr(rule)

	# the cheap test first, on the text: an IPv4 range of /1 to /23, or an IPv6 one of
	# /97 to /119 (which range_info reads as IPv4 when it is IPv4-mapped)
	regex.match(`(?i)^(?:[0-9.]+/(?:[1-9]|1[0-9]|2[0-3])|[0-9a-f:.]*:[0-9a-f:.]*/(?:9[7-9]|1[01][0-9]))$`, rule.cidr)
	info := net.range_info(rule.cidr)
	info.valid
	info.family == 4
	info.public
	info.prefix >= 1
	info.prefix <= 23
	violation := {
		"msg": sprintf(
			"%s has an %s rule allowing %s %s %s: a public IPv4 range wider than /24",
			[net.security_group_label, direction, net.describe(rule), peer_word[direction], net.cidr_text(rule.cidr)],
		),
		"key": rule.id,
	}
}
