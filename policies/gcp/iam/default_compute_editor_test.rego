package warden.gcp.iam.default_compute_editor_test

import data.warden.gcp.iam.default_compute_editor

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

test_default_compute_account_is_editor if {
	default_compute_editor.deny == {{
		"msg": "project acme-prod-4821 grants roles/editor to the default compute service account 480012345678-compute@developer.gserviceaccount.com",
		"key": "roles/editor/serviceAccount:480012345678-compute@developer.gserviceaccount.com",
		"role": "roles/editor",
		"member": "serviceAccount:480012345678-compute@developer.gserviceaccount.com",
	}} with input as project([binding("roles/editor", [
		"serviceAccount:480012345678-compute@developer.gserviceaccount.com",
		"serviceAccount:480012345678@cloudservices.gserviceaccount.com",
	])])
}

test_near_miss_narrow_roles_for_default_account if {
	count(default_compute_editor.deny) == 0 with input as project([
		binding("roles/logging.logWriter", ["serviceAccount:480012345678-compute@developer.gserviceaccount.com"]),
		binding("roles/monitoring.metricWriter", ["serviceAccount:480012345678-compute@developer.gserviceaccount.com"]),
	])
}

test_near_miss_other_service_account_is_editor if {
	count(default_compute_editor.deny) == 0 with input as project([binding("roles/editor", ["serviceAccount:compute@acme-prod-4821.iam.gserviceaccount.com"])])
}

test_folder_grants_editor_to_default_compute_account if {
	default_compute_editor.deny == {{
		"msg": "folder engineering (200000000001) grants roles/editor to the default compute service account 480012345678-compute@developer.gserviceaccount.com",
		"key": "roles/editor/serviceAccount:480012345678-compute@developer.gserviceaccount.com",
		"role": "roles/editor",
		"member": "serviceAccount:480012345678-compute@developer.gserviceaccount.com",
	}} with input as folder([binding("roles/editor", ["serviceAccount:480012345678-compute@developer.gserviceaccount.com"])])
}

test_near_miss_organization_grants_viewer_to_default_compute_account if {
	count(default_compute_editor.deny) == 0 with input as organization([binding("roles/viewer", ["serviceAccount:480012345678-compute@developer.gserviceaccount.com"])])
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := project([binding("roles/editor", ["serviceAccount:480012345678-compute@developer.gserviceaccount.com"])])
	want := {replace(v.msg, sprintf("project %s", [given.resource.attributes.project_id]), sprintf("IAM policy %s", [given.resource.uid])) | some v in default_compute_editor.deny with input as given}
	count(want) > 0
	{v.msg | some v in default_compute_editor.deny with input as json.remove(given, ["resource/name", "resource/attributes/project_id"])} == want
}
