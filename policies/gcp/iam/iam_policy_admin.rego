# METADATA
# title: Member other than an owner can rewrite the IAM policy
# description: projectIamAdmin, folderIamAdmin, folderAdmin, organizationAdmin and securityAdmin include setIamPolicy on the project, folder or organisation they are granted on; a holder can grant itself roles/owner at any time, so it is an owner in effect without appearing as one. No fix is automated because these roles are how a security or platform team manages access, and removing one can lock that team out; a person decides whether the member should hold owner power. Service accounts holding them are WARDEN-GCP-IAM-004's.
# custom:
#   id: WARDEN-GCP-IAM-013
#   severity: high
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.iam_policy_admin

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# iam_admin_roles hold resourcemanager.{projects,folders,organizations}.setIamPolicy.
iam_admin_roles := {
	"roles/resourcemanager.projectIamAdmin",
	"roles/resourcemanager.folderIamAdmin",
	"roles/resourcemanager.folderAdmin",
	"roles/resourcemanager.organizationAdmin",
	"roles/iam.securityAdmin",
}

# An unconditional owner already holds every permission: the role adds nothing to it.
deny contains violation if {
	roles := iam_admin_roles
	some b in bindings
	role := b.role
	role in roles
	some member in b.members
	not gcp.member_type(member) in {"serviceAccount", "deleted"}
	not gcp.is_public(member)
	not gcp.unconditional(bindings, "roles/owner", member)
	violation := {
		"msg": sprintf(
			"%s grants %s to %s%s, who can rewrite IAM policies and so make itself owner of %s",
			[gcp.policy_holder, role, member, gcp.condition_note(bindings, role, member), gcp.policy_reach],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
