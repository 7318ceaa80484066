# METADATA
# title: Service account holds an admin role
# description: Workloads run as service accounts; one holding owner, editor or an admin role turns any compromise of the workload, or of a key, into control of the project (of every project beneath, when granted on a folder or the organisation).
# custom:
#   id: WARDEN-GCP-IAM-004
#   severity: high
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.5"], nist-800-53-r5: ["AC-6", "AC-6(5)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_sa_no_administrative_privileges]
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member, condition]}
package warden.gcp.iam.service_account_admin

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

deny contains violation if {
	primitive_roles := gcp.primitive_admin_roles
	some [role, member] in gcp.resource_grants

	# gcp.admin_role(role) (the regular expression only for a versioned role), then gcp.member_type(member) == "serviceAccount" after a cheap
	# test of the member's prefix
	true in [role in primitive_roles, endswith(role, "admin"), endswith(role, "Admin"), admin_version(role)]
	startswith(member, "serviceAccount")
	gcp.member_type(member) == "serviceAccount"

	# Google's own service agents hold their roles by design.
	not gcp.service_agent(member)
	violation := {
		"msg": sprintf(
			"%s grants the admin role %s to service account %s%s",
			[gcp.policy_holder, role, gcp.member_id(member), gcp.condition_note(bindings, role, member)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}

# admin_version(role) is true for an admin role with a version suffix
# (roles/compute.instanceAdmin.v1), false for any other role.
admin_version(role) := regex.match(`[aA]dmin\.v[0-9]+$`, role)
