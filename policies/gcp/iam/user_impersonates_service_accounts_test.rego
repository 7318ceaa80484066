package warden.gcp.iam.user_impersonates_service_accounts_test

import data.warden.gcp.iam.user_impersonates_service_accounts

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

test_user_holds_service_account_user if {
	user_impersonates_service_accounts.deny == {{
		"msg": "project acme-prod-4821 grants roles/iam.serviceAccountUser to user:dev.singh@acme.example, who can act as every service account of the project",
		"key": "roles/iam.serviceAccountUser/user:dev.singh@acme.example",
		"role": "roles/iam.serviceAccountUser",
		"member": "user:dev.singh@acme.example",
	}} with input as project([binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example"])])
}

test_user_holds_token_creator if {
	count(user_impersonates_service_accounts.deny) == 1 with input as project([binding("roles/iam.serviceAccountTokenCreator", ["user:maria.lopez@acme.example"])])
}

test_near_miss_groups_and_service_accounts if {
	count(user_impersonates_service_accounts.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountTokenCreator", ["group:sre@acme.example"]),
		binding("roles/iam.serviceAccountUser", ["serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_near_miss_other_iam_roles if {
	count(user_impersonates_service_accounts.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountViewer", ["user:dev.singh@acme.example"]),
		binding("roles/iam.workloadIdentityUser", ["user:dev.singh@acme.example"]),
	])
}

test_organization_grants_token_creator_to_user if {
	user_impersonates_service_accounts.deny == {{
		"msg": "organization acme.example (631475985395) grants roles/iam.serviceAccountTokenCreator to user:dev.singh@acme.example, who can act as every service account of every project in the organization",
		"key": "roles/iam.serviceAccountTokenCreator/user:dev.singh@acme.example",
		"role": "roles/iam.serviceAccountTokenCreator",
		"member": "user:dev.singh@acme.example",
	}} with input as organization([binding("roles/iam.serviceAccountTokenCreator", ["user:dev.singh@acme.example"])])
}

test_folder_message if {
	some v in user_impersonates_service_accounts.deny with input as folder([binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example"])])
	v.msg == "folder engineering (200000000001) grants roles/iam.serviceAccountUser to user:dev.singh@acme.example, who can act as every service account of every project in the folder"
}

test_near_miss_folder_grants_to_group if {
	count(user_impersonates_service_accounts.deny) == 0 with input as folder([binding("roles/iam.serviceAccountUser", ["group:sre@acme.example"])])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example"])]), ["resource/attributes/project_id"])
	{v.msg | some v in user_impersonates_service_accounts.deny} == {"IAM policy acme-prod-4821 grants roles/iam.serviceAccountUser to user:dev.singh@acme.example, who can act as every service account of every resource the policy covers"} with input as bare
}
