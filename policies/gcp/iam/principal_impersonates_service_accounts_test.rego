package warden.gcp.iam.principal_impersonates_service_accounts_test

import data.warden.gcp.iam.principal_impersonates_service_accounts as policy

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

test_group_holds_token_creator if {
	policy.deny == {{
		"msg": "project acme-prod-4821 grants roles/iam.serviceAccountTokenCreator to group:sre@acme.example: every member of the group can act as every service account of the project",
		"key": "roles/iam.serviceAccountTokenCreator/group:sre@acme.example",
		"role": "roles/iam.serviceAccountTokenCreator",
		"member": "group:sre@acme.example",
	}} with input as project([binding("roles/iam.serviceAccountTokenCreator", ["group:sre@acme.example", "user:dev.singh@acme.example"])])
}

test_domain_service_account_and_federated_identities if {
	{v.msg | some v in policy.deny} == {
		"project acme-prod-4821 grants roles/iam.serviceAccountUser to domain:acme.example: everyone in the domain can act as every service account of the project",
		"project acme-prod-4821 grants roles/iam.serviceAccountUser to serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com: whatever runs as it can act as every service account of the project",
		"project acme-prod-4821 grants roles/iam.serviceAccountTokenCreator to principalSet://iam.googleapis.com/projects/480012345678/locations/global/workloadIdentityPools/github/attribute.repository_owner/acme: every federated identity in the set can act as every service account of the project",
	} with input as project([
		binding("roles/iam.serviceAccountUser", ["domain:acme.example", "serviceAccount:ci-deployer@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/iam.serviceAccountTokenCreator", ["principalSet://iam.googleapis.com/projects/480012345678/locations/global/workloadIdentityPools/github/attribute.repository_owner/acme"]),
	])
}

test_near_miss_users_service_agents_and_public_members if {
	# users are WARDEN-GCP-IAM-005's, public members WARDEN-GCP-IAM-002's
	count(policy.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountTokenCreator", [
			"user:dev.singh@acme.example",
			"serviceAccount:service-480012345678@gcp-sa-pubsub.iam.gserviceaccount.com",
			"allAuthenticatedUsers",
			"deleted:group:old-sre@acme.example?uid=123456789",
		]),
	])
}

test_near_miss_other_service_account_roles if {
	count(policy.deny) == 0 with input as project([
		binding("roles/iam.serviceAccountViewer", ["group:sre@acme.example"]),
		binding("roles/iam.workloadIdentityUser", ["serviceAccount:acme-prod-4821.svc.id.goog[default/app]"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/iam.serviceAccountUser", ["group:sre@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	{v.msg | some v in policy.deny with input as bare} == {"IAM policy //cloudresourcemanager.googleapis.com/projects/acme-prod-4821 grants roles/iam.serviceAccountUser to group:sre@acme.example: every member of the group can act as every service account of the project"}
}
