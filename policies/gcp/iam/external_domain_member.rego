# METADATA
# title: Member from outside the allowed domains holds a role
# description: Accounts outside the organisation's domains (personal Gmail, a former contractor's company) escape its identity controls, such as offboarding, MFA and password policy.
# custom:
#   id: WARDEN-GCP-IAM-006
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.1"], nist-800-53-r5: ["AC-2", "AC-3"], soc2: ["CC6.1", "CC6.2"], iso-27001-2022: ["A.5.15", "A.5.16"]}
#   remediation: {action: gcp.iam.remove_binding_member, risk: medium, params: [role, member, condition]}
package warden.gcp.iam.external_domain_member

import data.warden.lib.gcp

attrs := input.resource.attributes

configured_domains := domains if {
	domains := data.warden.config.allowed_domains
} else := []

# The allowed domains are the setting, or else the organisation's own domain: a project
# policy's organization_domain, an organisation policy's domain. A folder policy names no
# domain, so only the setting applies to it; with neither, nothing is outside.
allowed_domains := configured_domains if {
	count(configured_domains) > 0
} else := [organization_domain] if {
	organization_domain := object.get(attrs, "organization_domain", "")
	is_string(organization_domain)
	organization_domain != ""
} else := [domain] if {
	domain := object.get(attrs, "domain", "")
	is_string(domain)
	domain != ""
	attrs.organization_id
}

# gcp.in_domain(domain, parent) for some allowed parent, with the parents lowered once per
# evaluation (domain, from gcp.member_domain, is lower-case already).
allowed_exact := {lower(parent) | some parent in allowed_domains}

allowed_suffixes := [concat("", [".", lower(parent)]) | some parent in allowed_domains]

allowed(domain) if domain in allowed_exact

allowed(domain) if {
	some suffix in allowed_suffixes
	endswith(domain, suffix)
}

deny contains violation if {
	some [role, member] in gcp.resource_grants

	# Cheap tests first, on the member as a string. gcp.member_domain is defined for user,
	# group, domain and serviceAccount members only. A service account whose address ends
	# in gserviceaccount.com after a dot or the @ is a Google account (gcp.google_account);
	# any other member with a domain is not one.
	split(member, ":")[0] in {"user", "group", "serviceAccount", "domain"}
	[startswith(member, "serviceAccount:"), true in [endswith(lower(member), ".gserviceaccount.com"), endswith(lower(member), "@gserviceaccount.com")]] != [true, true]

	# defined for user, group, domain and serviceAccount members only
	domain := gcp.member_domain(member)
	not allowed(domain)
	violation := {
		"msg": sprintf(
			"%s grants %s to %s%s, whose domain %s is outside the allowed domains (%s)",
			[gcp.policy_holder, role, member, gcp.condition_note(attrs.bindings, role, member), domain, concat(", ", allowed_domains)],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
