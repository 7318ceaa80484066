# METADATA
# title: User can impersonate every service account of the project
# description: serviceAccountUser or serviceAccountTokenCreator granted on the project lets a user act as any of its service accounts, including the most privileged (on a folder or the organisation, any service account of every project beneath); grant them on individual service accounts instead.
# custom:
#   id: WARDEN-GCP-IAM-005
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.6"], nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium, params: [role, member, condition]}
package warden.gcp.iam.user_impersonates_service_accounts

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

impersonation_roles := {"roles/iam.serviceAccountUser", "roles/iam.serviceAccountTokenCreator"}

# The role is tested first, on the binding, before any member is looked at.
deny contains violation if {
	roles := impersonation_roles
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
