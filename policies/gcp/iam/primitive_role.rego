# METADATA
# title: Member holds roles/owner or roles/editor
# description: The basic owner and editor roles grant thousands of permissions across every service of the project (of every project beneath, when granted on a folder or the organisation); grant predefined or custom roles scoped to the work instead.
# custom:
#   id: WARDEN-GCP-IAM-001
#   severity: high
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member, condition]}
package warden.gcp.iam.primitive_role

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# The role is tested first, on the binding, before any member is looked at.
deny contains violation if {
	admin_roles := gcp.primitive_admin_roles
	some b in bindings
	role := b.role
	role in admin_roles
	some member in b.members

	# Google's own service agents hold editor by design; removing it breaks their services.
	not gcp.service_agent(member)
	violation := {
		"msg": sprintf(
			"%s grants the basic role %s to %s%s",
			[gcp.policy_holder, role, member, gcp.condition_note(bindings, role, member)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
