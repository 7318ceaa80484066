# METADATA
# title: Member from outside the allowed domains holds a role
# description: Accounts outside the organisation's domains (personal Gmail, a former contractor's company) escape its identity controls, such as offboarding, MFA and password policy.
# custom:
#   id: WARDEN-GCP-IAM-006
#   severity: medium
#   resource_types: [gcp.project.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.1"], nist-800-53-r5: ["AC-2", "AC-3"], soc2: ["CC6.1", "CC6.2"], iso-27001-2022: ["A.5.15", "A.5.16"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium}
package warden.gcp.iam.external_domain_member

import data.warden.lib.config
import data.warden.lib.gcp

attrs := input.resource.attributes

configured_domains := config.setting("allowed_domains", [])

# The allowed domains are the setting, or else the organisation's own domain; with neither,
# nothing is outside.
allowed_domains := configured_domains if {
	count(configured_domains) > 0
} else := [organization_domain] if {
	organization_domain := object.get(attrs, "organization_domain", "")
	is_string(organization_domain)
	organization_domain != ""
}

allowed(domain) if {
	some parent in allowed_domains
	gcp.in_domain(domain, parent)
}

deny contains violation if {
	some [role, member] in gcp.grants(attrs.bindings)

	# defined for user, group, domain and serviceAccount members only
	domain := gcp.member_domain(member)
	not gcp.google_account(member)
	not allowed(domain)
	violation := {
		"msg": sprintf(
			"project %s grants %s to %s%s, whose domain %s is outside the allowed domains (%s)",
			[attrs.project_id, role, member, gcp.condition_note(attrs.bindings, role, member), domain, concat(", ", allowed_domains)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
