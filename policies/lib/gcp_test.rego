package warden.lib.gcp_test

import data.warden.lib.gcp

test_member_type_and_id if {
	gcp.member_type("user:maria.lopez@acme.example") == "user"
	gcp.member_id("user:maria.lopez@acme.example") == "maria.lopez@acme.example"
	gcp.member_type("serviceAccount:app@acme-prod-4821.iam.gserviceaccount.com") == "serviceAccount"
	gcp.member_type("group:eng@acme.example") == "group"
	gcp.member_id("domain:acme.example") == "acme.example"
	gcp.member_type("allUsers") == "allUsers"
	gcp.member_id("allUsers") == ""
	gcp.member_type("allAuthenticatedUsers") == "allAuthenticatedUsers"
	gcp.member_type("deleted:user:old@acme.example?uid=123456789") == "deleted"
	gcp.member_id("deleted:user:old@acme.example?uid=123456789") == "user:old@acme.example?uid=123456789"
}

test_is_public if {
	gcp.is_public("allUsers")
	gcp.is_public("allAuthenticatedUsers")
	not gcp.is_public("domain:acme.example")
	not gcp.is_public("user:allusers@acme.example")
}

test_member_domain if {
	gcp.member_domain("user:Maria.Lopez@ACME.example") == "acme.example"
	gcp.member_domain("group:eng@acme.example") == "acme.example"
	gcp.member_domain("serviceAccount:etl@acme-data-1193.iam.gserviceaccount.com") == "acme-data-1193.iam.gserviceaccount.com"
	gcp.member_domain("domain:Partner.example") == "partner.example"
}

test_member_domain_undefined if {
	not gcp.member_domain("allUsers")
	not gcp.member_domain("deleted:user:old@acme.example?uid=1")
	not gcp.member_domain("user:not-an-email")
}

test_in_domain if {
	gcp.in_domain("acme.example", "acme.example")
	gcp.in_domain("eu.acme.example", "ACME.example")
	not gcp.in_domain("notacme.example", "acme.example")
	not gcp.in_domain("acme.example.evil.test", "acme.example")
}

test_google_account if {
	gcp.google_account("serviceAccount:app@acme-prod-4821.iam.gserviceaccount.com")
	gcp.google_account("serviceAccount:480012345678-compute@developer.gserviceaccount.com")
	gcp.google_account("serviceAccount:acme-prod-4821@appspot.gserviceaccount.com")
	not gcp.google_account("user:someone@gserviceaccount.com.evil.test")
	not gcp.google_account("user:maria.lopez@acme.example")
}

test_service_agent if {
	gcp.service_agent("serviceAccount:480012345678@cloudservices.gserviceaccount.com")
	gcp.service_agent("serviceAccount:service-480012345678@compute-system.iam.gserviceaccount.com")
	gcp.service_agent("serviceAccount:service-480012345678@gcp-sa-pubsub.iam.gserviceaccount.com")
	gcp.service_agent("serviceAccount:service-480012345678@container-engine-robot.iam.gserviceaccount.com")
	not gcp.service_agent("serviceAccount:480012345678-compute@developer.gserviceaccount.com")
	not gcp.service_agent("serviceAccount:service-api@acme-prod-4821.iam.gserviceaccount.com")
	not gcp.service_agent("user:service-480012345678@acme.example")
}

test_default_compute_account if {
	gcp.default_compute_account("serviceAccount:480012345678-compute@developer.gserviceaccount.com")
	not gcp.default_compute_account("serviceAccount:compute@acme-prod-4821.iam.gserviceaccount.com")
	not gcp.default_compute_account("serviceAccount:acme-prod-4821@appspot.gserviceaccount.com")
	not gcp.default_compute_account("user:480012345678-compute@developer.gserviceaccount.com")
}

test_admin_role if {
	gcp.admin_role("roles/owner")
	gcp.admin_role("roles/editor")
	gcp.admin_role("roles/iam.securityAdmin")
	gcp.admin_role("roles/storage.admin")
	gcp.admin_role("projects/acme-prod-4821/roles/deployAdmin")
	not gcp.admin_role("roles/viewer")
	not gcp.admin_role("roles/iam.serviceAccountUser")
	not gcp.admin_role("roles/storage.objectViewer")
	not gcp.admin_role("roles/adminViewer")
}

bindings := [
	{"role": "roles/viewer", "members": ["group:eng@acme.example", "user:maria.lopez@acme.example"], "condition": null},
	{"role": "roles/storage.admin", "members": ["user:maria.lopez@acme.example"], "condition": {"title": "until 2027", "expression": "request.time < timestamp(\"2027-01-01T00:00:00Z\")"}},
	{"role": "roles/storage.admin", "members": ["user:maria.lopez@acme.example"], "condition": {"title": "", "expression": "resource.name.startsWith(\"projects/_/buckets/tmp-\")"}},
	{"role": "roles/logging.viewer", "members": ["group:eng@acme.example"], "condition": {"title": "business hours", "expression": "request.time.getHours(\"Europe/Paris\") < 18"}},
	{"role": "roles/logging.viewer", "members": ["group:eng@acme.example"]},
]

test_grants if {
	gcp.grants(bindings) == {
		["roles/viewer", "group:eng@acme.example"],
		["roles/viewer", "user:maria.lopez@acme.example"],
		["roles/storage.admin", "user:maria.lopez@acme.example"],
		["roles/logging.viewer", "group:eng@acme.example"],
	}
}

test_condition_note if {
	gcp.condition_note(bindings, "roles/viewer", "group:eng@acme.example") == ""

	# an unconditional binding (condition absent) wins over a conditional one
	gcp.condition_note(bindings, "roles/logging.viewer", "group:eng@acme.example") == ""
	gcp.condition_note(bindings, "roles/storage.admin", "user:maria.lopez@acme.example") == ` under condition "resource.name.startsWith(\"projects/_/buckets/tmp-\")" or "until 2027"`
}

test_resource_grants_are_the_grants_of_the_resource if {
	gcp.resource_grants == gcp.grants(bindings) with input as {"resource": {"attributes": {"bindings": bindings}}}
	gcp.resource_grants == set() with input as {"resource": {"attributes": {"bindings": []}}}
}

test_member_domain_odd_members if {
	gcp.member_domain("domain") == ""
	gcp.member_domain("domain:Acme.Example:x") == "acme.example:x"
	gcp.member_domain("user:a:b@Acme.example") == "acme.example"
	not gcp.member_domain("user")
	not gcp.member_domain(":user:a@acme.example")
	not gcp.member_domain("user:a@b@acme.example")
	not gcp.member_domain("principal://iam.googleapis.com/x@acme.example")
}

test_policy_holder if {
	gcp.policy_holder == "project acme-prod-4821" with input as {"resource": {"attributes": {"project_id": "acme-prod-4821", "organization_domain": "acme.example"}}}
	gcp.policy_holder == "folder engineering (200000000001)" with input as {"resource": {"attributes": {"folder_id": "200000000001", "display_name": "engineering"}}}
	gcp.policy_holder == "folder 200000000001" with input as {"resource": {"attributes": {"folder_id": "200000000001", "display_name": ""}}}
	gcp.policy_holder == "organization acme.example (631475985395)" with input as {"resource": {"attributes": {"organization_id": "631475985395", "domain": "acme.example"}}}
	gcp.policy_holder == "organization 631475985395" with input as {"resource": {"attributes": {"organization_id": "631475985395", "domain": ""}}}
}

test_policy_reach if {
	gcp.policy_reach == "the project" with input as {"resource": {"attributes": {"project_id": "acme-prod-4821"}}}
	gcp.policy_reach == "every project in the folder" with input as {"resource": {"attributes": {"folder_id": "200000000001"}}}
	gcp.policy_reach == "every project in the organization" with input as {"resource": {"attributes": {"organization_id": "631475985395"}}}
}
