package warden.gcp.iam.primitive_role_test

import data.warden.gcp.iam.primitive_role

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

test_owner_and_editor_fire_per_member if {
	primitive_role.deny == {
		{
			"msg": "project acme-prod-4821 grants the basic role roles/owner to user:maria.lopez@acme.example",
			"key": "roles/owner/user:maria.lopez@acme.example",
			"role": "roles/owner",
			"member": "user:maria.lopez@acme.example",
		},
		{
			"msg": "project acme-prod-4821 grants the basic role roles/editor to group:platform@acme.example",
			"key": "roles/editor/group:platform@acme.example",
			"role": "roles/editor",
			"member": "group:platform@acme.example",
		},
		{
			"msg": "project acme-prod-4821 grants the basic role roles/editor to serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
			"key": "roles/editor/serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
			"role": "roles/editor",
			"member": "serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
		},
	} with input as project([
		binding("roles/owner", ["user:maria.lopez@acme.example"]),
		binding("roles/editor", ["group:platform@acme.example", "serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_conditional_grant_still_fires if {
	b := object.union(binding("roles/owner", ["user:maria.lopez@acme.example"]), {"condition": {"title": "break-glass", "expression": "request.time < timestamp(\"2026-12-01T00:00:00Z\")"}})
	some v in primitive_role.deny with input as project([b])
	v.msg == `project acme-prod-4821 grants the basic role roles/owner to user:maria.lopez@acme.example under condition "break-glass"`
}

test_near_miss_viewer_and_predefined_roles if {
	count(primitive_role.deny) == 0 with input as project([
		binding("roles/viewer", ["group:eng@acme.example"]),
		binding("roles/compute.admin", ["group:platform@acme.example"]),
		binding("roles/resourcemanager.projectIamAdmin", ["user:maria.lopez@acme.example"]),
	])
}

test_near_miss_google_apis_service_agent if {
	count(primitive_role.deny) == 0 with input as project([binding("roles/editor", ["serviceAccount:480012345678@cloudservices.gserviceaccount.com"])])
}

test_no_bindings if {
	count(primitive_role.deny) == 0 with input as project([])
}

test_organization_grants_owner if {
	primitive_role.deny == {{
		"msg": "organization acme.example (631475985395) grants the basic role roles/owner to user:maria.lopez@acme.example",
		"key": "roles/owner/user:maria.lopez@acme.example",
		"role": "roles/owner",
		"member": "user:maria.lopez@acme.example",
	}} with input as organization([
		binding("roles/owner", ["user:maria.lopez@acme.example"]),
		binding("roles/resourcemanager.organizationAdmin", ["group:gcp-admins@acme.example"]),
	])
}

test_near_miss_folder_with_predefined_roles if {
	count(primitive_role.deny) == 0 with input as folder([
		binding("roles/resourcemanager.folderAdmin", ["group:platform@acme.example"]),
		binding("roles/viewer", ["group:eng@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_or_name_still_violates if {
	bare := json.remove(project([binding("roles/owner", ["user:maria.lopez@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	{v.msg | some v in primitive_role.deny} == {"IAM policy //cloudresourcemanager.googleapis.com/projects/acme-prod-4821 grants the basic role roles/owner to user:maria.lopez@acme.example"} with input as bare
}

test_condition_without_title_or_expression_still_violates if {
	b := {"role": "roles/owner", "members": ["user:maria.lopez@acme.example"], "condition": {"description": "temporary"}}
	{v.msg | some v in primitive_role.deny} == {"project acme-prod-4821 grants the basic role roles/owner to user:maria.lopez@acme.example under condition a condition"} with input as project([b])
}
