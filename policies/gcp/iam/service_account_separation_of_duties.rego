# METADATA
# title: Same member administers service accounts and acts as them
# description: roles/iam.serviceAccountAdmin creates service accounts and controls who may use them; roles/iam.serviceAccountUser runs workloads as them. One member holding both (on the project, or on a folder or the organisation above it) can mint an identity and act as it with nobody else involved. The fix removes serviceAccountUser from that member (risk high, as deployments that member runs as a service account stop).
# custom:
#   id: WARDEN-GCP-IAM-009
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.8"], nist-800-53-r5: ["AC-5"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.3"]}
#   prowler: [iam_role_sa_enforce_separation_of_duties]
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member]}
package warden.gcp.iam.service_account_separation_of_duties

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

admin_role := "roles/iam.serviceAccountAdmin"

user_role := "roles/iam.serviceAccountUser"

# The members of the user role are few: they are looked up among the admins.
deny contains violation if {
	some b in bindings
	b.role == user_role
	some member in b.members
	gcp.holds(bindings, admin_role, member)
	violation := {
		"msg": sprintf(
			"%s grants %s both %s%s and %s%s: one identity both manages the service accounts of %s and acts as them",
			[
				gcp.policy_holder, member,
				admin_role, gcp.condition_note(bindings, admin_role, member),
				user_role, gcp.condition_note(bindings, user_role, member),
				gcp.policy_reach,
			],
		),
		"key": concat("/", [user_role, member]),
		"role": user_role,
		"member": member,
	}
}
