# METADATA
# title: Impersonation role granted on a folder or the organisation
# description: serviceAccountUser or serviceAccountTokenCreator granted on a folder or the organisation is inherited by every service account of every project beneath, including projects and accounts created later; one compromised holder becomes any workload identity of the hierarchy. Grant the role on individual service accounts. The fix removes the member from the binding (risk high, as deployments across many projects may depend on it). Google's service agents are left alone.
# custom:
#   id: WARDEN-GCP-IAM-012
#   severity: high
#   resource_types: [gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.6"], nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member, condition]}
package warden.gcp.iam.inherited_impersonation

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# Public members are WARDEN-GCP-IAM-002's (critical) and deleted ones WARDEN-GCP-IAM-015's.
deny contains violation if {
	roles := gcp.impersonation_roles
	some b in bindings
	role := b.role
	role in roles
	some member in b.members
	not gcp.is_public(member)
	not gcp.deleted(member)
	not gcp.service_agent(member)
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
