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
