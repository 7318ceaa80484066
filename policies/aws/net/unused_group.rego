# METADATA
# title: Security group is not used
# description: No network interface uses the group (no instance, load balancer, Lambda function, database or endpoint) and no other group's rules name it, so it is left over from something deleted or never deployed; it clutters every review of the network and, attached by mistake later, grants whatever its rules allow. Default groups are left out, as AWS does not let them be deleted (they have their own policy, WARDEN-AWS-NET-005). The group is judged only when the region's network interfaces and groups were read whole, never when a read failed. No automated fix, since deleting a group cannot be undone and something warden does not read may still name it (a launch template, an Auto Scaling or CloudFormation configuration, another account's rule); confirm and delete it by hand.
# custom:
#   id: WARDEN-AWS-NET-024
#   severity: low
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["CM-7"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: notify, risk: none}
#   prowler: [ec2_securitygroup_not_used]
package warden.aws.net.unused_group

import data.warden.lib.display
import data.warden.lib.net

# net.group_unattached holds only when the interfaces were read whole; referenced_by is
# absent when the region's groups were not all read, and then nothing is decided.
deny contains {"msg": msg, "key": "unused"} if {
	net.group_unattached
	not input.resource.attributes.is_default == true
	input.resource.attributes.group_name != "default"
	refs := input.resource.attributes.referenced_by
	is_array(refs)
	count(refs) == 0
	msg := sprintf(
		"%s in %s is not used: no network interface uses it and no other security group's rules name it",
		[net.security_group_label, display.attribute("vpc_id", "an unknown VPC")],
	)
}
