# METADATA
# title: User has two active access keys
# description: Two active keys double what can leak and usually mean a rotation was started and never finished; keep one. No fix is automated, as which of the two keys is still in use, and by what, is for its owner to say before the other is deactivated.
# custom:
#   id: WARDEN-AWS-IAM-009
#   severity: low
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.13"], nist-800-53-r5: ["IA-5"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_user_two_active_access_key]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.user_two_active_keys

import data.warden.lib.display

# Most users have one key: count(access_keys) > 1 ends the evaluation for them.
deny contains violation if {
	count(input.resource.attributes.access_keys) > 1

	# A key without an id is named by its position: it still counts.
	active := [display.field(key, "id", sprintf("#%d", [i])) | some i, key in input.resource.attributes.access_keys; key.status == "Active"]
	count(active) > 1
	violation := {"msg": sprintf(
		"user %s has %d active access keys (%s)",
		[display.name, count(active), concat(", ", sort(active))],
	)}
}
