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
