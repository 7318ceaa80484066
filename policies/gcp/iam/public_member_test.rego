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
