# METADATA
# title: Security group has too many rules
# description: A group with more ingress or egress rules than max_security_group_rules (default 50) cannot be reviewed by a person, and its exceptions hide openings; split it by role. No automated fix is safe since which rules are surplus is a design decision.
# custom:
#   id: WARDEN-AWS-NET-022
#   severity: low
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["CM-7", "SC-7"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: notify, risk: none}
#   prowler: [ec2_securitygroup_with_many_ingress_egress_rules]
package warden.aws.net.many_rules

import data.warden.lib.net

max_rules := n if {
	n := data.warden.config.max_security_group_rules
} else := 50

deny contains violation if {
	some direction in ["ingress", "egress"]
	rules := input.resource.attributes[direction]
	count(rules) > max_rules
	violation := {
		"msg": sprintf(
			"%s has %d %s rules (at most %d)",
			[net.security_group_label, count(rules), direction, max_rules],
		),
		"key": direction,
	}
}
