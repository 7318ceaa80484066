# METADATA
# title: AWSCloudShellFullAccess is attached
# description: >-
#   AWSCloudShellFullAccess gives a shell in the console that runs with the principal's
#   credentials, with file upload and download and outbound network access: a way to move
#   data out and tools in that bypasses the controls on workstations. One finding per user,
#   group or role it is attached to; the fix detaches it.
# custom:
#   id: WARDEN-AWS-IAM-021
#   severity: medium
#   resource_types: [aws.iam.policy]
#   frameworks: {nist-800-53-r5: ["AC-6"]}
#   prowler: [iam_policy_cloudshell_admin_not_attached]
#   remediation: {action: aws.iam.detach_policy, risk: medium, params: [attachment]}
package warden.aws.iam.cloudshell_full_access

import data.warden.lib.display

# cloudshell_policy holds for the AWS managed policy, in any partition.
cloudshell_policy if regex.match(`^arn:aws[a-z-]*:iam::aws:policy/AWSCloudShellFullAccess$`, input.resource.uid)

deny contains violation if {
	input.resource.type == "aws.iam.policy"
	cloudshell_policy
	some plural, kind in {"users": "user", "groups": "group", "roles": "role"}
	some name in object.get(object.get(input.resource.attributes, "attached_to", {}), plural, [])
	violation := {
		"msg": sprintf("%s is attached to %s %s, which gives it a console shell with its credentials and file transfer", [display.name, kind, name]),
		"key": concat("/", [kind, name]),
		"attachment": concat("/", [kind, name]),
	}
}

# Attached, but the attachments were not listed: one finding for the policy.
deny contains violation if {
	input.resource.type == "aws.iam.policy"
	cloudshell_policy
	input.resource.attributes.attachment_count > 0
	count(object.get(input.resource.attributes, "attached_to", {})) == 0
	violation := {"msg": sprintf("%s is attached %d times, which gives each holder a console shell with its credentials and file transfer", [display.name, input.resource.attributes.attachment_count])}
}
