package warden.gcp.iam.inherited_impersonation_test

import data.warden.gcp.iam.inherited_impersonation as policy

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

test_organization_grants_token_creator_to_user if {
	policy.deny == {{
		"msg": "organization acme.example (631475985395) grants roles/iam.serviceAccountTokenCreator to user:dev.singh@acme.example, who can act as every service account of every project in the organization",
		"key": "roles/iam.serviceAccountTokenCreator/user:dev.singh@acme.example",
		"role": "roles/iam.serviceAccountTokenCreator",
		"member": "user:dev.singh@acme.example",
	}} with input as organization([binding("roles/iam.serviceAccountTokenCreator", ["user:dev.singh@acme.example"])])
}

test_folder_grants_service_account_user_to_group_and_workload if {
	{v.msg | some v in policy.deny} == {
		"folder engineering (200000000001) grants roles/iam.serviceAccountUser to group:sre@acme.example, who can act as every service account of every project in the folder",
		"folder engineering (200000000001) grants roles/iam.serviceAccountUser to serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com under condition \"deploy window\", who can act as every service account of every project in the folder",
	} with input as folder([
		binding("roles/iam.serviceAccountUser", ["group:sre@acme.example"]),
		{"role": "roles/iam.serviceAccountUser", "members": ["serviceAccount:terraform@acme-seed-1001.iam.gserviceaccount.com"], "condition": {"title": "deploy window", "expression": "request.time.getHours(\"UTC\") < 6"}},
	])
}

test_near_miss_service_agents_public_and_deleted_members if {
	count(policy.deny) == 0 with input as organization([binding("roles/iam.serviceAccountTokenCreator", [
		"serviceAccount:service-org-631475985395@gcp-sa-logging.iam.gserviceaccount.com",
		"allUsers",
		"deleted:user:old@acme.example?uid=123456789",
	])])
}

test_near_miss_other_roles_on_folder if {
	count(policy.deny) == 0 with input as folder([
		binding("roles/iam.serviceAccountViewer", ["group:sre@acme.example"]),
		binding("roles/resourcemanager.folderViewer", ["user:dev.singh@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(folder([binding("roles/iam.serviceAccountUser", ["group:sre@acme.example"])]), ["resource/name", "resource/attributes/folder_id"])
	{v.msg | some v in policy.deny with input as bare} == {"IAM policy //cloudresourcemanager.googleapis.com/folders/200000000001 grants roles/iam.serviceAccountUser to group:sre@acme.example, who can act as every service account of every resource the policy covers"}
}
