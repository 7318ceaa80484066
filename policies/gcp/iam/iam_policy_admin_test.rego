package warden.gcp.iam.iam_policy_admin_test

import data.warden.gcp.iam.iam_policy_admin as policy

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

test_group_holds_security_admin if {
	policy.deny == {{
		"msg": "project acme-prod-4821 grants roles/iam.securityAdmin to group:security@acme.example, who can rewrite IAM policies and so make itself owner of the project",
		"key": "roles/iam.securityAdmin/group:security@acme.example",
		"role": "roles/iam.securityAdmin",
		"member": "group:security@acme.example",
	}} with input as project([binding("roles/iam.securityAdmin", ["group:security@acme.example", "serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"])])
}

test_conditional_owner_does_not_excuse if {
	{v.key | some v in policy.deny} == {"roles/resourcemanager.projectIamAdmin/user:dev.singh@acme.example"} with input as project([
		binding("roles/resourcemanager.projectIamAdmin", ["user:dev.singh@acme.example"]),
		{"role": "roles/owner", "members": ["user:dev.singh@acme.example"], "condition": {"title": "break glass", "expression": "request.time < timestamp(\"2026-12-01T00:00:00Z\")"}},
	])
}

test_folder_and_organization_admins if {
	{v.key | some v in policy.deny} == {"roles/resourcemanager.folderAdmin/group:platform@acme.example", "roles/resourcemanager.folderIamAdmin/user:maria.lopez@acme.example"} with input as folder([
		binding("roles/resourcemanager.folderAdmin", ["group:platform@acme.example"]),
		binding("roles/resourcemanager.folderIamAdmin", ["user:maria.lopez@acme.example"]),
	])
	count(policy.deny) == 1 with input as organization([binding("roles/resourcemanager.organizationAdmin", ["group:gcp-admins@acme.example"])])
}

test_near_miss_owner_service_account_and_viewer_roles if {
	count(policy.deny) == 0 with input as project([
		binding("roles/owner", ["user:maria.lopez@acme.example"]),
		binding("roles/resourcemanager.projectIamAdmin", ["user:maria.lopez@acme.example", "serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com", "deleted:user:old@acme.example?uid=1"]),
		binding("roles/iam.securityReviewer", ["group:security@acme.example"]),
		binding("roles/iam.roleViewer", ["group:security@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.securityAdmin", ["group:security@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	count(policy.deny) == 1 with input as bare
}
