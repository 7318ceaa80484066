# METADATA
# title: Person or group can create keys for every service account
# description: roles/iam.serviceAccountKeyAdmin on a project, folder or organisation lets its holder create a key for any service account beneath and sign in as it from anywhere; unlike impersonation, the key outlives the grant and the holder's own account. Grant it on individual service accounts, or not at all where keys are forbidden. The fix removes the member from the binding (risk medium). Service accounts holding it are WARDEN-GCP-IAM-004's.
# custom:
#   id: WARDEN-GCP-IAM-014
#   severity: high
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium, params: [role, member, condition]}
package warden.gcp.iam.service_account_key_admin

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

role := "roles/iam.serviceAccountKeyAdmin"

# Service accounts (WARDEN-GCP-IAM-004), public members (WARDEN-GCP-IAM-002) and deleted
# members (WARDEN-GCP-IAM-015) are reported by their own policies.
deny contains violation if {
	some b in bindings
	b.role == role
	some member in b.members
	not gcp.member_type(member) in {"serviceAccount", "deleted"}
	not gcp.is_public(member)
	violation := {
		"msg": sprintf(
			"%s grants %s to %s%s, who can create keys for every service account of %s and sign in as them from anywhere",
			[gcp.policy_holder, role, member, gcp.condition_note(bindings, role, member), gcp.policy_reach],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
