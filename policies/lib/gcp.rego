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
# (roles/iam.securityAdmin, roles/storage.admin, projects/p/roles/deployAdmin), also with
# a version suffix (roles/compute.instanceAdmin.v1, the instance admin role CIS names).
admin_role(role) if role in primitive_admin_roles

admin_role(role) if endswith(role, "admin")

admin_role(role) if endswith(role, "Admin")

admin_role(role) if regex.match(`[aA]dmin\.v[0-9]+$`, role)

# default_service_account(email) holds for the service accounts Google creates in every
# project and grants roles/editor by default: the Compute Engine default
# (PROJECT_NUMBER-compute@developer.gserviceaccount.com) and the App Engine default
# (PROJECT_ID@appspot.gserviceaccount.com).
default_service_account(email) if regex.match(`^[0-9]+-compute@developer\.gserviceaccount\.com$`, lower(email))

default_service_account(email) if regex.match(`^[a-z][a-z0-9-]*@appspot\.gserviceaccount\.com$`, lower(email))

# impersonation_roles let a member act as a service account: run code as it (actAs) or
# mint its tokens. Granted on a project, folder or organisation, they reach every service
# account beneath, including those created later.
impersonation_roles := {"roles/iam.serviceAccountUser", "roles/iam.serviceAccountTokenCreator"}

# deleted(member) holds for a member whose account was deleted ("deleted:user:a@x?uid=…",
# "deleted:serviceAccount:…", "deleted:group:…"): the binding outlives it.
deleted(member) if startswith(member, "deleted:")

# holds(bindings, role, member) holds when some binding, conditional or not, grants role to
# member.
holds(bindings, role, member) if {
	some b in bindings
	b.role == role
	member in b.members
}

# --- audit logging ----------------------------------------------------------------

# audit_log_types are the Data Access log types CIS GCP 2.1 requires for allServices
# (Admin Activity logs are always written and cannot be configured).
audit_log_types := {"ADMIN_READ", "DATA_READ", "DATA_WRITE"}

# logged_types(audit_configs) is the set of log types the allServices entry of
# audit_configs enables.
logged_types(audit_configs) := {c.log_type |
	some ac in audit_configs
	ac.service == "allServices"
	some c in object.get(ac, "audit_log_configs", [])
}

# audit_exemptions(audit_configs) is the set of {service, log_type, member} that
# audit_configs exempt from logging.
audit_exemptions(audit_configs) := {{"service": ac.service, "log_type": c.log_type, "member": m} |
	some ac in audit_configs
	some c in object.get(ac, "audit_log_configs", [])
	some m in object.get(c, "exempted_members", [])
}

# --- workload identity federation ---------------------------------------------------

# multi_tenant_issuer_hosts are OIDC issuers that mint tokens for anyone with an account
# on the platform (any GitHub repository, any GitLab.com project, any Google account, any
# HCP Terraform organisation, any Buildkite pipeline), with an audience the token's
# requester chooses: a provider trusting one without an attribute condition accepts all
# of them. Issuers with a tenant in their URL (GitHub Enterprise's
# token.actions.githubusercontent.com/ENTERPRISE, CircleCI's oidc.circleci.com/org/ID,
# Bitbucket's workspace issuers) vouch for one tenant only.
multi_tenant_issuer_hosts := {
	"token.actions.githubusercontent.com",
	"gitlab.com",
	"accounts.google.com",
	"app.terraform.io",
	"agent.buildkite.com",
}

# issuer_parts(uri) is [host, path] of an issuer URI: the host lower-cased without
# scheme, user info or port, the path without its trailing slashes.
issuer_parts(uri) := [host, path] if {
	rest := regex.replace(lower(trim_space(uri)), `^[a-z][a-z0-9+.-]*://`, "")
	authority := split(rest, "/")[0]
	host := split(regex.replace(authority, `^.*@`, ""), ":")[0]
	path := trim_right(substring(rest, count(authority), -1), "/")
}

# multi_tenant_issuer(uri) holds for an issuer URI naming a multi-tenant issuer host with no
# tenant path.
multi_tenant_issuer(uri) if {
	[host, path] := issuer_parts(uri)
	host in multi_tenant_issuer_hosts
	path == ""
}

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

# resource_audit_configs is the audit_configs of the IAM policy evaluated; undefined when
# they were not read (then no audit-logging policy decides anything).
resource_audit_configs := configs if {
	configs := input.resource.attributes.audit_configs
	is_array(configs)
}

# workload_provider_active holds when the workload-identity provider evaluated can vend
# credentials: neither it nor its pool is disabled and it is not deleted. Google's API
# leaves out a disabled flag that is false, so an absent flag is read as false; an absent
# state as the ACTIVE that a listed provider has.
workload_provider_active if {
	attrs := input.resource.attributes
	object.get(attrs, "pool_disabled", false) == false
	object.get(attrs, "disabled", false) == false
	object.get(attrs, "state", "ACTIVE") == "ACTIVE"
}

# workload_provider_unconditioned holds when the provider evaluated has no attribute
# condition (an empty or blank one).
workload_provider_unconditioned if {
	is_string(input.resource.attributes.attribute_condition)
	trim_space(input.resource.attributes.attribute_condition) == ""
}
