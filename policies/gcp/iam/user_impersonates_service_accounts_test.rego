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

test_near_miss_conditional_grant_still_reported if {
	user_impersonates_service_accounts.deny == {{
		"msg": "project acme-prod-4821 grants roles/iam.serviceAccountTokenCreator to user:priya.shah@acme.example under condition \"expires 2026-12-31\", who can act as every service account of the project",
		"key": "roles/iam.serviceAccountTokenCreator/user:priya.shah@acme.example",
		"role": "roles/iam.serviceAccountTokenCreator",
		"member": "user:priya.shah@acme.example",
	}} with input as project([{
		"role": "roles/iam.serviceAccountTokenCreator",
		"members": ["user:priya.shah@acme.example"],
		"condition": {"title": "expires 2026-12-31", "expression": "request.time < timestamp(\"2027-01-01T00:00:00Z\")"},
	}])
}

test_near_miss_other_iam_roles if {
	count(user_impersonates_service_accounts.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountViewer", ["user:dev.singh@acme.example"]),
		binding("roles/iam.workloadIdentityUser", ["user:dev.singh@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example"])]), ["resource/attributes/project_id"])
	{v.msg | some v in user_impersonates_service_accounts.deny} == {"IAM policy acme-prod-4821 grants roles/iam.serviceAccountUser to user:dev.singh@acme.example, who can act as every service account of every resource the policy covers"} with input as bare
}
