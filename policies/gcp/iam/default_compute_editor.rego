# METADATA
# title: Default compute service account holds roles/editor
# description: Every VM and GKE node created without a service account runs as the default compute service account, which Google grants editor on the project by default; any compromised instance then controls the project.
# custom:
#   id: WARDEN-GCP-IAM-007
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.5"], nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member, condition]}
package warden.gcp.iam.default_compute_editor

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# The role is tested first, on the binding, before any member is looked at.
deny contains violation if {
	some b in bindings
	b.role == "roles/editor"
	some member in b.members
	gcp.default_compute_account(member)
	violation := {
		"msg": sprintf(
			"%s grants roles/editor to the default compute service account %s%s",
			[gcp.policy_holder, gcp.member_id(member), gcp.condition_note(bindings, "roles/editor", member)],
		),
		"key": concat("/", ["roles/editor", member]),
		"role": "roles/editor",
		"member": member,
	}
}
