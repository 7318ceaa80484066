# METADATA
# title: Binding still names a deleted account
# description: When a user, group or service account is deleted its bindings stay, as deleted:…?uid=…; undeleting the account (possible for 30 days for service accounts, and by an administrator for users) brings every grant back unreviewed, and the stale entries hide what the policy really grants. The fix removes the member from the binding (risk low, as the account cannot use it while deleted).
# custom:
#   id: WARDEN-GCP-IAM-015
#   severity: low
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-2"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: low, params: [role, member, condition]}
package warden.gcp.iam.deleted_member

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

deny contains violation if {
	some [role, member] in gcp.resource_grants
	startswith(member, "deleted:")
	violation := {
		"msg": sprintf(
			"%s still grants %s%s to the deleted account %s",
			[gcp.policy_holder, role, gcp.condition_note(bindings, role, member), gcp.member_id(member)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
