# METADATA
# title: GCP IAM helpers
# description: Members, roles and bindings of GCP IAM policies.
package warden.lib.gcp

import data.warden.lib.display

# Members as IAM policies write them: "user:a@x", "serviceAccount:sa@p.iam.gserviceaccount.com",
# "group:g@x", "domain:x", "allUsers", "allAuthenticatedUsers", "deleted:user:a@x?uid=123", …

public_members := {"allUsers", "allAuthenticatedUsers"}

primitive_admin_roles := {"roles/owner", "roles/editor"}

# member_type(member) is what precedes the first colon ("user", "serviceAccount", "group",
# "domain", "deleted", …), or the whole member when it has none ("allUsers").
member_type(member) := split(member, ":")[0]

# member_id(member) is what follows the type: an email, a domain, or "" for allUsers.
member_id(member) := substring(member, count(member_type(member)) + 1, -1) if {
	contains(member, ":")
} else := ""

# is_public(member) holds for allUsers and allAuthenticatedUsers.
is_public(member) if member in public_members

# member_domain(member) is the lower-case domain of a user, group or service account email,
# or of a domain member. It is undefined for public and deleted members.
# (member_type and member_id, spelled out: no function calls.)
member_domain(member) := lower(substring(member, 7, -1)) if startswith(member, "domain:")

member_domain("domain") := ""

member_domain(member) := lower(domain) if {
	i := indexof(member, ":")
	i > 0
	substring(member, 0, i) in {"user", "group", "serviceAccount"}
	[_, domain] := split(substring(member, i + 1, -1), "@")
}

# in_domain(domain, parent) holds when domain is parent or one of its subdomains.
in_domain(domain, parent) if lower(domain) == lower(parent)

in_domain(domain, parent) if endswith(lower(domain), concat("", [".", lower(parent)]))

# google_account(member) holds for service accounts, which all live under gserviceaccount.com.
google_account(member) if {
	member_type(member) == "serviceAccount"
	in_domain(member_domain(member), "gserviceaccount.com")
}

# service_agent(member) holds for the service accounts Google creates and manages for its
# own services (the Google APIs service agent PROJECT_NUMBER@cloudservices… holds editor by
# default, service-PROJECT_NUMBER@… agents hold serviceAgent roles): removing their roles
# breaks those services.
service_agent(member) if {
	member_type(member) == "serviceAccount"
	member_domain(member) == "cloudservices.gserviceaccount.com"
}

service_agent(member) if {
	member_type(member) == "serviceAccount"
	regex.match(`^service-(org-)?[0-9]+@[a-z0-9-]+(\.iam)?\.gserviceaccount\.com$`, member_id(member))
}

# default_compute_account(member) holds for a project's default compute service account,
# PROJECT_NUMBER-compute@developer.gserviceaccount.com.
default_compute_account(member) if {
	member_type(member) == "serviceAccount"
	regex.match(`^[0-9]+-compute@developer\.gserviceaccount\.com$`, lower(member_id(member)))
}

# admin_role(role) holds for roles/owner, roles/editor and any role named …admin or …Admin
# (roles/iam.securityAdmin, roles/storage.admin, projects/p/roles/deployAdmin).
admin_role(role) if role in primitive_admin_roles

admin_role(role) if endswith(role, "admin")

admin_role(role) if endswith(role, "Admin")

# grants(bindings) is the set of [role, member] pairs that the bindings grant.
grants(bindings) := {[b.role, m] | some b in bindings; some m in b.members}

# unconditional(bindings, role, member) holds when some binding without a condition grants
# role to member.
unconditional(bindings, role, member) if {
	some b in bindings
	b.role == role
	member in b.members
	object.get(b, "condition", null) == null
}

# condition_note(bindings, role, member) is "" when member holds role unconditionally, or
# else names the conditions under which it does (" under condition \"business hours\""),
# for messages. A condition narrows a grant but does not remove it.
condition_note(bindings, role, member) := "" if {
	unconditional(bindings, role, member)
} else := sprintf(" under condition %s", [concat(" or ", sort({condition_name(b.condition) |
	some b in bindings
	b.role == role
	member in b.members
}))])

# condition_name(condition) names a binding's condition by its title, else its expression,
# else as "a condition" (a message never decides a violation).
condition_name(condition) := sprintf("%q", [condition.title]) if {
	is_string(condition.title)
	condition.title != ""
} else := sprintf("%q", [condition.expression]) if {
	is_string(condition.expression)
	condition.expression != ""
} else := "a condition"

# --- the resource being evaluated ----------------------------------------------

# resource_grants is grants(input.resource.attributes.bindings): a rule without arguments,
# computed once per IAM policy and shared by every policy of the type (grants(bindings)
# would hash all the bindings, its argument, on every call).
resource_grants := {[b.role, m] | some b in input.resource.attributes.bindings; some m in b.members}

# policy_holder names the project, folder or organisation whose IAM policy is evaluated,
# for messages: "project acme-prod", "folder engineering (200000000001)", "organization
# acme.example (123456789012)" (the id alone when the name is empty). A folder's or an
# organisation's grants reach every project beneath it.
policy_holder := sprintf("project %s", [input.resource.attributes.project_id]) if {
	input.resource.attributes.project_id
} else := holder_name("folder", input.resource.attributes.folder_id, object.get(input.resource.attributes, "display_name", "")) if {
	input.resource.attributes.folder_id
} else := holder_name("organization", input.resource.attributes.organization_id, object.get(input.resource.attributes, "domain", "")) if {
	input.resource.attributes.organization_id
} else := sprintf("IAM policy %s", [display.name])

holder_name(kind, id, name) := sprintf("%s %s (%s)", [kind, name, id]) if {
	is_string(name)
	name != ""
} else := sprintf("%s %s", [kind, id])

# policy_reach says which service accounts and resources a grant of the evaluated policy
# reaches, for messages: "the project", "every project in the folder", "every project in
# the organization".
policy_reach := "the project" if {
	input.resource.attributes.project_id
} else := "every project in the folder" if {
	input.resource.attributes.folder_id
} else := "every project in the organization" if {
	input.resource.attributes.organization_id
} else := "every resource the policy covers"
