package warden.gcp.iam.service_account_key_admin_test

import data.warden.gcp.iam.service_account_key_admin as policy

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

test_user_holds_key_admin if {
	policy.deny == {{
		"msg": "project acme-prod-4821 grants roles/iam.serviceAccountKeyAdmin to user:dev.singh@acme.example, who can create keys for every service account of the project and sign in as them from anywhere",
		"key": "roles/iam.serviceAccountKeyAdmin/user:dev.singh@acme.example",
		"role": "roles/iam.serviceAccountKeyAdmin",
		"member": "user:dev.singh@acme.example",
	}} with input as project([binding("roles/iam.serviceAccountKeyAdmin", ["user:dev.singh@acme.example", "serviceAccount:terraform@acme-prod-4821.iam.gserviceaccount.com"])])
}

test_group_on_organization if {
	{v.msg | some v in policy.deny} == {"organization acme.example (631475985395) grants roles/iam.serviceAccountKeyAdmin to group:platform@acme.example, who can create keys for every service account of every project in the organization and sign in as them from anywhere"} with input as organization([binding("roles/iam.serviceAccountKeyAdmin", ["group:platform@acme.example"])])
}

test_near_miss_service_accounts_public_and_deleted_members if {
	count(policy.deny) == 0 with input as folder([binding("roles/iam.serviceAccountKeyAdmin", [
		"serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com",
		"allAuthenticatedUsers",
		"deleted:user:old@acme.example?uid=123456789",
	])])
}

test_near_miss_other_key_roles if {
	count(policy.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountViewer", ["user:dev.singh@acme.example"]),
		binding("roles/iam.serviceAccountAdmin", ["group:iam-admins@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.serviceAccountKeyAdmin", ["user:dev.singh@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	count(policy.deny) == 1 with input as bare
}
