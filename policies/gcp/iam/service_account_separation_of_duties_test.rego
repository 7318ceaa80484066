package warden.gcp.iam.service_account_separation_of_duties_test

import data.warden.gcp.iam.service_account_separation_of_duties as sod

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

test_member_holds_both_roles if {
	sod.deny == {{
		"msg": "project acme-prod-4821 grants user:dev.singh@acme.example both roles/iam.serviceAccountAdmin and roles/iam.serviceAccountUser: one identity both manages the service accounts of the project and acts as them",
		"key": "roles/iam.serviceAccountUser/user:dev.singh@acme.example",
		"role": "roles/iam.serviceAccountUser",
		"member": "user:dev.singh@acme.example",
	}} with input as project([
		binding("roles/iam.serviceAccountAdmin", ["user:dev.singh@acme.example", "group:iam-admins@acme.example"]),
		binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example", "serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_conditional_grant_is_noted if {
	some v in sod.deny with input as folder([
		{"role": "roles/iam.serviceAccountUser", "members": ["group:platform@acme.example"], "condition": {"title": "weekdays", "expression": "request.time.getDayOfWeek() < 5"}},
		binding("roles/iam.serviceAccountAdmin", ["group:platform@acme.example"]),
	])
	v.msg == "folder engineering (200000000001) grants group:platform@acme.example both roles/iam.serviceAccountAdmin and roles/iam.serviceAccountUser under condition \"weekdays\": one identity both manages the service accounts of every project in the folder and acts as them"
}

test_near_miss_roles_held_by_different_members if {
	count(sod.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountAdmin", ["group:iam-admins@acme.example"]),
		binding("roles/iam.serviceAccountUser", ["group:deployers@acme.example"]),
	])
}

test_near_miss_admin_with_other_service_account_roles if {
	count(sod.deny) == 0 with input as organization([
		binding("roles/iam.serviceAccountAdmin", ["group:iam-admins@acme.example"]),
		binding("roles/iam.serviceAccountTokenCreator", ["group:iam-admins@acme.example"]),
		binding("roles/iam.serviceAccountViewer", ["group:iam-admins@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.serviceAccountAdmin", ["user:dev.singh@acme.example"]), binding("roles/iam.serviceAccountUser", ["user:dev.singh@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	{v.msg | some v in sod.deny with input as bare} == {"IAM policy //cloudresourcemanager.googleapis.com/projects/acme-prod-4821 grants user:dev.singh@acme.example both roles/iam.serviceAccountAdmin and roles/iam.serviceAccountUser: one identity both manages the service accounts of every resource the policy covers and acts as them"}
}
