# METADATA
# title: Group, domain or workload can impersonate every service account of the project
# description: serviceAccountUser or serviceAccountTokenCreator granted on the project to a group, a whole domain, a service account or a set of federated identities lets every identity behind that member act as any service account of the project, including the most privileged and those created later; grant the role on the service accounts that member needs instead. The fix removes the member from the binding (risk high, as pipelines deploying as other service accounts stop until granted on those accounts). Users are WARDEN-GCP-IAM-005's, Google's service agents are left alone.
# custom:
#   id: WARDEN-GCP-IAM-011
#   severity: medium
#   resource_types: [gcp.project.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.6"], nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_no_service_roles_at_project_level]
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member, condition]}
package warden.gcp.iam.principal_impersonates_service_accounts

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

# who[type] says who stands behind a member of that type, for messages.
who := {
	"group": "every member of the group",
	"domain": "everyone in the domain",
	"serviceAccount": "whatever runs as it",
	"principal": "the federated identity",
	"principalSet": "every federated identity in the set",
}

# The role is tested first, on the binding, before any member is looked at.
deny contains violation if {
	roles := gcp.impersonation_roles
	some b in bindings
	role := b.role
	role in roles
	some member in b.members
	behind := who[gcp.member_type(member)]
	not gcp.service_agent(member)
	violation := {
		"msg": sprintf(
			"%s grants %s to %s%s: %s can act as every service account of the project",
			[gcp.policy_holder, role, member, gcp.condition_note(bindings, role, member), behind],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
