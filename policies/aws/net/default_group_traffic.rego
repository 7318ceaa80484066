# METADATA
# title: Default security group allows traffic
# description: Resources land in a VPC's default security group when no group is chosen; CIS wants it to have no rules at all so that such resources are isolated until given a deliberate group.
# custom:
#   id: WARDEN-AWS-NET-005
#   severity: medium
#   resource_types: [aws.ec2.security_group]
#   frameworks: {cis-aws-3.0: ["5.4"], nist-800-53-r5: ["SC-7", "AC-4"], pci-dss-4.0: ["1.2.1", "1.3.1"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20", "A.8.22"]}
#   remediation: {action: aws.ec2.revoke_default_sg_rules, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_default_restrict_traffic]
package warden.aws.net.default_group_traffic

import data.warden.lib.display
import data.warden.lib.net

# The other side of a rule, read in its direction.
peer_word := {"ingress": "from", "egress": "to"}

# is_default is a bool: comparing it with true lets OPA's rule index skip the rule for any
# other group without evaluating it.
deny contains violation if {
	input.resource.attributes.is_default == true
	attrs := input.resource.attributes
	some direction in ["ingress", "egress"]
	some rule in object.get(attrs, direction, [])
	violation := {
		"msg": sprintf(
			"default security group %s of %s has an %s rule allowing %s %s %s; default groups should allow no traffic",
			[display.attribute("group_id", display.name), display.attribute("vpc_id", "an unknown VPC"), direction, net.describe(rule), peer_word[direction], net.peer(rule)],
		),
		"key": rule.id,
		"target": rule.id,
	}
}
