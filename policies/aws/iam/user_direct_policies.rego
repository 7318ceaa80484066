# METADATA
# title: User has policies attached directly
# description: Permissions granted to users one by one drift and are hard to review; grant them through groups (or roles) instead. No fix is automated, as detaching the policies before the user is in a group granting the same would take their access away, and which group fits is a person's call.
# custom:
#   id: WARDEN-AWS-IAM-014
#   severity: low
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.15"], nist-800-53-r5: ["AC-2", "AC-6"], pci-dss-4.0: ["7.2.1"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.15", "A.5.18"]}
#   prowler: [iam_policy_attached_only_to_group_or_roles]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.user_direct_policies

import data.warden.lib.display

deny contains violation if {
	input.resource.type == "aws.iam.user"

	# A policy without a name is named by its ARN or position: never left out of the count.
	attached := [display.field(p, "name", display.field(p, "arn", sprintf("#%d", [i]))) | some i, p in object.get(input.resource.attributes, "attached_policies", [])]
	inline := [display.field(p, "name", sprintf("#%d", [i])) | some i, p in object.get(input.resource.attributes, "inline_policies", [])]
	count(attached) + count(inline) > 0
	names := array.concat(attached, [sprintf("%s (inline)", [name]) | some name in inline])
	violation := {
		"msg": sprintf("user %s has policies attached directly instead of through groups: %s", [display.name, concat(", ", names)]),
		"attached_policies": attached,
		"inline_policies": inline,
	}
}
