package warden.gcp.iam.public_member_test

import data.warden.gcp.iam.public_member

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

test_all_users if {
	public_member.deny == {{
		"msg": "project acme-prod-4821 grants roles/storage.objectViewer to allUsers (anyone on the internet)",
		"key": "roles/storage.objectViewer/allUsers",
		"role": "roles/storage.objectViewer",
		"member": "allUsers",
	}} with input as project([binding("roles/storage.objectViewer", ["allUsers", "group:eng@acme.example"])])
}

test_all_authenticated_users if {
	{v.key | some v in public_member.deny} == {"roles/viewer/allAuthenticatedUsers"} with input as project([binding("roles/viewer", ["allAuthenticatedUsers"])])
}

test_condition_is_noted_not_excused if {
	b := object.union(
		binding("roles/storage.objectViewer", ["allUsers"]),
		{"condition": {"title": "public assets only", "expression": "resource.name.startsWith(\"projects/_/buckets/acme-public-assets\")"}},
	)
	some v in public_member.deny with input as project([b])
	v.msg == `project acme-prod-4821 grants roles/storage.objectViewer to allUsers (anyone on the internet) under condition "public assets only"`
}

test_near_miss_whole_domain_is_not_public if {
	count(public_member.deny) == 0 with input as project([
		binding("roles/viewer", ["domain:acme.example", "group:allusers@acme.example"]),
		binding("roles/browser", ["user:allauthenticatedusers@acme.example"]),
	])
}

test_folder_grants_all_users if {
	public_member.deny == {{
		"msg": "folder engineering (200000000001) grants roles/viewer to allAuthenticatedUsers (anyone with a Google account)",
		"key": "roles/viewer/allAuthenticatedUsers",
		"role": "roles/viewer",
		"member": "allAuthenticatedUsers",
	}} with input as folder([binding("roles/viewer", ["allAuthenticatedUsers", "group:eng@acme.example"])])
}

test_near_miss_organization_grants_its_domain if {
	count(public_member.deny) == 0 with input as organization([binding("roles/browser", ["domain:acme.example"])])
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := project([binding("roles/storage.objectViewer", ["allUsers"])])
	want := {replace(v.msg, sprintf("project %s", [given.resource.attributes.project_id]), sprintf("IAM policy %s", [given.resource.uid])) | some v in public_member.deny with input as given}
	count(want) > 0
	{v.msg | some v in public_member.deny with input as json.remove(given, ["resource/name", "resource/attributes/project_id"])} == want
}
