package warden.gcp.iam.service_account_admin_test

import data.warden.gcp.iam.service_account_admin

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

test_admin_roles_held_by_service_accounts if {
	{v.key | some v in service_account_admin.deny} == {
		"roles/editor/serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
		"roles/iam.securityAdmin/serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com",
		"roles/storage.admin/serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com",
	} with input as project([
		binding("roles/editor", ["serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/iam.securityAdmin", ["serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/storage.admin", ["serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_message if {
	service_account_admin.deny == {{
		"msg": "project acme-prod-4821 grants the admin role roles/owner to service account terraform@acme-prod-4821.iam.gserviceaccount.com",
		"key": "roles/owner/serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com",
		"role": "roles/owner",
		"member": "serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com",
	}} with input as project([binding("roles/owner", ["serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"])])
}

test_custom_admin_role if {
	count(service_account_admin.deny) == 1 with input as project([binding("projects/acme-prod-4821/roles/deployAdmin", ["serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"])])
}

test_near_miss_narrow_roles if {
	count(service_account_admin.deny) == 0 with input as project([
		binding("roles/cloudsql.client", ["serviceAccount:app-runtime@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/storage.objectViewer", ["serviceAccount:app-runtime@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/iam.serviceAccountUser", ["serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_near_miss_admin_role_held_by_a_person if {
	count(service_account_admin.deny) == 0 with input as project([binding("roles/iam.securityAdmin", ["group:security@acme.example"])])
}

test_near_miss_service_agents if {
	count(service_account_admin.deny) == 0 with input as project([
		binding("roles/editor", ["serviceAccount:480012345678@cloudservices.gserviceaccount.com"]),
		binding("roles/compute.serviceAgent", ["serviceAccount:service-480012345678@compute-system.iam.gserviceaccount.com"]),
	])
}

test_folder_grants_admin_role_to_service_account if {
	service_account_admin.deny == {{
		"msg": "folder engineering (200000000001) grants the admin role roles/resourcemanager.folderAdmin to service account terraform@acme-seed-1001.iam.gserviceaccount.com",
		"key": "roles/resourcemanager.folderAdmin/serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com",
		"role": "roles/resourcemanager.folderAdmin",
		"member": "serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com",
	}} with input as folder([binding("roles/resourcemanager.folderAdmin", ["serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com"])])
}

test_near_miss_organization_admin_held_by_a_group if {
	count(service_account_admin.deny) == 0 with input as organization([
		binding("roles/resourcemanager.organizationAdmin", ["group:gcp-admins@acme.example"]),
		binding("roles/browser", ["serviceAccount:inventory@acme-seed-1001.iam.gserviceaccount.com"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := project([binding("roles/owner", ["serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"])])
	want := {replace(v.msg, sprintf("project %s", [given.resource.attributes.project_id]), sprintf("IAM policy %s", [given.resource.uid])) | some v in service_account_admin.deny with input as given}
	count(want) > 0
	{v.msg | some v in service_account_admin.deny with input as json.remove(given, ["resource/name", "resource/attributes/project_id"])} == want
}

test_versioned_admin_role if {
	service_account_admin.deny == {{
		"msg": "project acme-prod-4821 grants the admin role roles/compute.instanceAdmin.v1 to service account ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
		"key": "roles/compute.instanceAdmin.v1/serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
		"role": "roles/compute.instanceAdmin.v1",
		"member": "serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com",
	}} with input as project([
		binding("roles/compute.instanceAdmin.v1", ["serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/securitycenter.adminViewer", ["serviceAccount:inventory@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}
