package warden.gcp.iam.binding_recommendation_test

import data.warden.gcp.iam.binding_recommendation as policy

ci := "serviceAccount:ci@acme-prod.iam.gserviceaccount.com"

bob := "user:bob@acme.example"

policy_with(recommendations) := {"resource": {
	"uid": "//cloudresourcemanager.googleapis.com/projects/acme-prod",
	"type": "gcp.project.iam_policy",
	"name": "acme-prod",
	"account": "acme-prod",
	"region": "global",
	"scope": "gcp/acme-prod/iam",
	"tags": {},
	"attributes": {
		"project_id": "acme-prod",
		"project_number": "111111111111",
		"organization_domain": "acme.example",
		"etag": "BwXhqQ7eQwU=",
		"bindings": [
			{"role": "roles/editor", "members": [ci], "condition": null},
			{"role": "roles/owner", "members": [bob], "condition": null},
			{"role": "roles/storage.admin", "members": [bob], "condition": {"title": "until 2030", "expression": "request.time < timestamp('2030-01-01T00:00:00Z')"}},
		],
		"audit_configs": [],
		"recommendations": recommendations,
	},
}}

name(id) := sprintf("projects/111111111111/locations/global/recommenders/google.iam.policy.Recommender/recommendations/%s", [id])

replace_editor := {
	"name": name("r1"), "etag": "\"a1b2c3d4e5f60718\"", "state": "ACTIVE", "subtype": "REPLACE_ROLE",
	"member": ci, "role": "roles/editor", "new_roles": ["roles/storage.objectViewer", "roles/logging.logWriter"],
	"description": "Replace the current role with a smaller role to cover the permissions needed.",
	"last_refresh": "2026-12-05T07:00:00Z", "exercised_permissions": 3, "inferred_permissions": 0, "total_permissions": 412,
}

remove_owner := {
	"name": name("r2"), "etag": "\"0f1e2d3c4b5a6978\"", "state": "ACTIVE", "subtype": "REMOVE_ROLE",
	"member": bob, "role": "roles/owner", "new_roles": [],
	"description": "This role has not been used during the observation window.",
	"last_refresh": "2026-12-04T07:00:00Z", "exercised_permissions": 0, "inferred_permissions": 2, "total_permissions": 9800,
}

test_replacement_names_roles_evidence_and_date if {
	policy.deny == {{
		"msg": "project acme-prod: Google's IAM recommender suggests replacing roles/editor of serviceAccount:ci@acme-prod.iam.gserviceaccount.com with roles/storage.objectViewer, roles/logging.logWriter (used 3 of 412 permissions in 90 days; data of 2026-12-05)",
		"key": "roles/editor/serviceAccount:ci@acme-prod.iam.gserviceaccount.com",
		"role": "roles/editor",
		"member": ci,
		"new_roles": ["roles/storage.objectViewer", "roles/logging.logWriter"],
		"recommendation": name("r1"),
		"etag": "\"a1b2c3d4e5f60718\"",
	}} with input as policy_with([replace_editor])
}

test_removal_with_inferred_permissions if {
	{v.msg | some v in policy.deny} == {"project acme-prod: Google's IAM recommender suggests removing roles/owner from user:bob@acme.example (used 0 of 9800 permissions in 90 days, 2 more inferred as needed; data of 2026-12-04)"} with input as policy_with([remove_owner])
}

test_one_finding_per_recommendation if {
	{v.key | some v in policy.deny} == {
		"roles/editor/serviceAccount:ci@acme-prod.iam.gserviceaccount.com",
		"roles/owner/user:bob@acme.example",
	} with input as policy_with([replace_editor, remove_owner])
}

test_conditional_binding_is_named if {
	rec := object.union(remove_owner, {"role": "roles/storage.admin", "name": name("r3")})
	{v.msg | some v in policy.deny} == {"project acme-prod: Google's IAM recommender suggests removing roles/storage.admin from user:bob@acme.example under condition \"until 2030\" (used 0 of 9800 permissions in 90 days, 2 more inferred as needed; data of 2026-12-04)"} with input as policy_with([rec])
}

# --- near misses -----------------------------------------------------------------

test_nothing_without_recommendations if {
	given := json.remove(policy_with([]), ["resource/attributes/recommendations"])
	count(policy.deny) == 0 with input as given
	count(policy.deny) == 0 with input as json.patch(given, [{"op": "add", "path": "/resource/attributes/recommendations_error", "value": "recommender.ListRecommendations: PermissionDenied"}])
	count(policy.deny) == 0 with input as policy_with([])
}

test_nothing_once_no_longer_active if {
	count(policy.deny) == 0 with input as policy_with([object.union(replace_editor, {"state": "CLAIMED"})])
	count(policy.deny) == 0 with input as policy_with([object.union(remove_owner, {"state": "SUCCEEDED"})])
}

test_nothing_once_the_binding_is_gone if {
	# Applied since Google computed it: the member no longer holds the role.
	count(policy.deny) == 0 with input as policy_with([object.union(remove_owner, {"member": "user:carol@acme.example"})])
	count(policy.deny) == 0 with input as policy_with([object.union(replace_editor, {"role": "roles/viewer"})])
}

# --- messages never decide a violation -------------------------------------------

test_unknown_counts_and_date_still_violate if {
	rec := json.remove(replace_editor, ["exercised_permissions", "total_permissions", "last_refresh", "name", "etag", "state"])
	{v.msg | some v in policy.deny} == {"project acme-prod: Google's IAM recommender suggests replacing roles/editor of serviceAccount:ci@acme-prod.iam.gserviceaccount.com with roles/storage.objectViewer, roles/logging.logWriter (permission use not known; data of an unknown date)"} with input as policy_with([rec])
	{v.msg | some v in policy.deny} == {"project acme-prod: Google's IAM recommender suggests replacing roles/editor of serviceAccount:ci@acme-prod.iam.gserviceaccount.com with roles/storage.objectViewer, roles/logging.logWriter (used 3 of its permissions in 90 days; data of 2026-12-05)"} with input as policy_with([object.union(replace_editor, {"total_permissions": null})])
}

test_policy_without_project_id_still_violates if {
	given := json.remove(policy_with([remove_owner]), ["resource/attributes/project_id", "resource/name"])
	count(policy.deny) == 1 with input as given
}
