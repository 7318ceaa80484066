package warden.gcp.iam.deleted_member_test

import data.warden.gcp.iam.deleted_member as policy

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

test_deleted_user_and_service_account if {
	policy.deny == {
		{
			"msg": "project acme-prod-4821 still grants roles/viewer to the deleted account user:former.employee@acme.example?uid=112233445566778899001",
			"key": "roles/viewer/deleted:user:former.employee@acme.example?uid=112233445566778899001",
			"role": "roles/viewer",
			"member": "deleted:user:former.employee@acme.example?uid=112233445566778899001",
		},
		{
			"msg": "project acme-prod-4821 still grants roles/storage.objectAdmin under condition \"uploads only\" to the deleted account serviceAccount:old-etl@acme-prod-4821.iam.gserviceaccount.com?uid=998877665544332211",
			"key": "roles/storage.objectAdmin/deleted:serviceAccount:old-etl@acme-prod-4821.iam.gserviceaccount.com?uid=998877665544332211",
			"role": "roles/storage.objectAdmin",
			"member": "deleted:serviceAccount:old-etl@acme-prod-4821.iam.gserviceaccount.com?uid=998877665544332211",
		},
	} with input as project([
		binding("roles/viewer", ["group:eng@acme.example", "deleted:user:former.employee@acme.example?uid=112233445566778899001"]),
		{"role": "roles/storage.objectAdmin", "members": ["deleted:serviceAccount:old-etl@acme-prod-4821.iam.gserviceaccount.com?uid=998877665544332211"], "condition": {"title": "uploads only", "expression": "resource.name.startsWith(\"projects/_/buckets/uploads\")"}},
	])
}

test_deleted_group_on_organization if {
	count(policy.deny) == 1 with input as organization([binding("roles/browser", ["deleted:group:contractors@acme.example?uid=5566"])])
}

test_near_miss_live_members_named_deleted if {
	count(policy.deny) == 0 with input as folder([binding("roles/viewer", ["user:deleted@acme.example", "group:deleted-users@acme.example", "allUsers"])])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/viewer", ["deleted:user:x@acme.example?uid=1"])]), ["resource/name", "resource/attributes/project_id"])
	count(policy.deny) == 1 with input as bare
}
