package warden.gcp.iam.external_domain_member_test

import data.warden.gcp.iam.external_domain_member

project(bindings) := {"resource": {
	"uid": "//cloudresourcemanager.googleapis.com/projects/acme-prod-4821",
	"type": "gcp.project.iam_policy",
	"name": "acme-prod-4821",
	"account": "acme-prod-4821",
	"region": "global",
	"scope": "gcp/acme-prod-4821/iam",
	"tags": {},
	"attributes": {
		"project_id": "acme-prod-4821",
		"project_number": "480012345678",
		"organization_domain": "acme.example",
		"etag": "BwYh3vQ1xKs=",
		"bindings": bindings,
	},
}}

binding(role, members) := {"role": role, "members": members, "condition": null}

folder(bindings) := {"resource": {
	"uid": "//cloudresourcemanager.googleapis.com/folders/200000000001",
	"type": "gcp.folder.iam_policy",
	"name": "engineering",
	"account": "folders/200000000001",
	"region": "global",
	"scope": "gcp/folders/200000000001/iam",
	"tags": {},
	"attributes": {
		"folder_id": "200000000001",
		"display_name": "engineering",
		"parent": "organizations/631475985395",
		"etag": "BwYh3vQ1xKs=",
		"bindings": bindings,
	},
}}

organization(bindings) := {"resource": {
	"uid": "//cloudresourcemanager.googleapis.com/organizations/631475985395",
	"type": "gcp.organization.iam_policy",
	"name": "acme.example",
	"account": "organizations/631475985395",
	"region": "global",
	"scope": "gcp/organizations/631475985395/iam",
	"tags": {},
	"attributes": {
		"organization_id": "631475985395",
		"domain": "acme.example",
		"etag": "BwYh3vQ1xKs=",
		"bindings": bindings,
	},
}}

test_gmail_user_outside_organisation_domain if {
	external_domain_member.deny == {{
		"msg": "project acme-prod-4821 grants roles/viewer to user:contractor.jane@gmail.com, whose domain gmail.com is outside the allowed domains (acme.example)",
		"key": "roles/viewer/user:contractor.jane@gmail.com",
		"role": "roles/viewer",
		"member": "user:contractor.jane@gmail.com",
	}} with input as project([binding("roles/viewer", ["user:contractor.jane@gmail.com", "group:eng@acme.example"])])
}

test_groups_and_domains_outside if {
	{v.key | some v in external_domain_member.deny} == {
		"roles/bigquery.dataViewer/group:analysts@partner-analytics.example",
		"roles/bigquery.dataViewer/domain:partner-analytics.example",
	} with input as project([binding("roles/bigquery.dataViewer", ["group:analysts@partner-analytics.example", "domain:partner-analytics.example"])])
}

test_near_miss_organisation_domain_and_subdomains if {
	count(external_domain_member.deny) == 0 with input as project([
		binding("roles/viewer", ["group:eng@acme.example", "user:Maria.Lopez@ACME.example", "domain:acme.example"]),
		binding("roles/logging.viewer", ["user:ops@eu.acme.example"]),
	])
}

test_lookalike_domain_fires if {
	count(external_domain_member.deny) == 1 with input as project([binding("roles/viewer", ["user:it@acme.example.evil.test"])])
}

test_near_miss_service_accounts_of_other_projects if {
	count(external_domain_member.deny) == 0 with input as project([
		binding("roles/bigquery.dataViewer", ["serviceAccount:etl@partner-analytics-7731.iam.gserviceaccount.com"]),
		binding("roles/editor", ["serviceAccount:480012345678@cloudservices.gserviceaccount.com"]),
	])
}

test_near_miss_public_and_deleted_members if {
	count(external_domain_member.deny) == 0 with input as project([binding("roles/viewer", ["allUsers", "deleted:user:old@gmail.com?uid=123456789012345678901"])])
}

test_setting_replaces_organisation_domain if {
	{v.member | some v in external_domain_member.deny} == {"user:maria.lopez@acme.example"} with input as project([binding("roles/viewer", ["user:maria.lopez@acme.example", "user:bob@acme-corp.example", "user:kim@acme.co.example"])])
		with data.warden.config.allowed_domains as ["acme-corp.example", "acme.co.example"]
}

test_nothing_fires_without_domains if {
	p := project([binding("roles/viewer", ["user:contractor.jane@gmail.com"])])
	no_org := json.patch(p, [{"op": "replace", "path": "/resource/attributes/organization_domain", "value": ""}])
	count(external_domain_member.deny) == 0 with input as no_org
	count(external_domain_member.deny) == 1 with input as no_org with data.warden.config.allowed_domains as ["acme.example"]
}

test_organization_domain_allows if {
	external_domain_member.deny == {{
		"msg": "organization acme.example (631475985395) grants roles/browser to user:contractor.jane@gmail.com, whose domain gmail.com is outside the allowed domains (acme.example)",
		"key": "roles/browser/user:contractor.jane@gmail.com",
		"role": "roles/browser",
		"member": "user:contractor.jane@gmail.com",
	}} with input as organization([binding("roles/browser", ["user:contractor.jane@gmail.com", "group:eng@acme.example", "user:ops@eu.acme.example"])])
}

test_near_miss_organization_members_inside if {
	count(external_domain_member.deny) == 0 with input as organization([binding("roles/browser", ["group:eng@acme.example", "domain:acme.example"])])
}

test_folder_only_with_setting if {
	f := folder([binding("roles/viewer", ["user:contractor.jane@gmail.com", "group:eng@acme.example"])])
	count(external_domain_member.deny) == 0 with input as f
	{v.member | some v in external_domain_member.deny} == {"user:contractor.jane@gmail.com"} with input as f with data.warden.config.allowed_domains as ["acme.example"]
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := project([binding("roles/viewer", ["user:contractor.jane@gmail.com"])])
	want := {replace(v.msg, sprintf("project %s", [given.resource.attributes.project_id]), sprintf("IAM policy %s", [given.resource.uid])) | some v in external_domain_member.deny with input as given}
	count(want) > 0
	{v.msg | some v in external_domain_member.deny with input as json.remove(given, ["resource/name", "resource/attributes/project_id"])} == want
}
