# METADATA
# title: User can impersonate every service account of the project
# description: serviceAccountUser or serviceAccountTokenCreator granted on the project lets a user act as any of its service accounts, including the most privileged and those created later; grant them on individual service accounts instead. Grants on a folder or the organisation are WARDEN-GCP-IAM-012's, grants to groups, domains and service accounts WARDEN-GCP-IAM-011's.
# custom:
#   id: WARDEN-GCP-IAM-005
#   severity: medium
#   resource_types: [gcp.project.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.6"], nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_no_service_roles_at_project_level]
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium, params: [role, member, condition]}
package warden.gcp.iam.user_impersonates_service_accounts

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# The role is tested first, on the binding, before any member is looked at.
deny contains violation if {
	roles := gcp.impersonation_roles
	some b in bindings
	role := b.role
	role in roles
	some member in b.members
	gcp.member_type(member) == "user"
	violation := {
		"msg": sprintf(
			"%s grants %s to %s%s, who can act as every service account of %s",
			[gcp.policy_holder, role, member, gcp.condition_note(bindings, role, member), gcp.policy_reach],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
