# METADATA
# title: allUsers or allAuthenticatedUsers hold a role
# description: allUsers is anyone on the internet and allAuthenticatedUsers is anyone with a Google account; a role granted to either on a project, folder or organisation is granted to the world.
# custom:
#   id: WARDEN-GCP-IAM-002
#   severity: critical
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-3", "AC-6"], pci-dss-4.0: ["7.2.1"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium, params: [role, member, condition]}
package warden.gcp.iam.public_member

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

who := {
	"allUsers": "anyone on the internet",
	"allAuthenticatedUsers": "anyone with a Google account",
}

# A condition narrows the grant but still grants it to the public: it is noted, not excused.
deny contains violation if {
	public_members := gcp.public_members
	some [role, member] in gcp.resource_grants
	member in public_members
	violation := {
		"msg": sprintf(
			"%s grants %s to %s (%s)%s",
			[gcp.policy_holder, role, member, who[member], gcp.condition_note(bindings, role, member)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
