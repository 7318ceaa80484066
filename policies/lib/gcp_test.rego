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

test_admin_role_with_version_suffix if {
	gcp.admin_role("roles/compute.instanceAdmin.v1")
	gcp.admin_role("roles/compute.instanceAdmin")
	not gcp.admin_role("roles/securitycenter.adminViewer")
	not gcp.admin_role("roles/compute.viewer.v1")
}

test_default_service_account if {
	gcp.default_service_account("480012345678-compute@developer.gserviceaccount.com")
	gcp.default_service_account("acme-prod-4821@appspot.gserviceaccount.com")
	not gcp.default_service_account("ci-deployer@acme-prod-4821.iam.gserviceaccount.com")
	not gcp.default_service_account("480012345678@cloudservices.gserviceaccount.com")
	not gcp.default_service_account("480012345678-compute@developer.gserviceaccount.com.evil.test")
}

test_deleted if {
	gcp.deleted("deleted:user:old@acme.example?uid=123")
	gcp.deleted("deleted:serviceAccount:gone@acme-prod-4821.iam.gserviceaccount.com?uid=456")
	not gcp.deleted("user:deleted@acme.example")
}

test_holds_conditional_or_not if {
	bindings := [
		{"role": "roles/iam.serviceAccountUser", "members": ["user:a@acme.example"], "condition": {"title": "t", "expression": "e"}},
		{"role": "roles/viewer", "members": ["user:b@acme.example"], "condition": null},
	]
	gcp.holds(bindings, "roles/iam.serviceAccountUser", "user:a@acme.example")
	gcp.holds(bindings, "roles/viewer", "user:b@acme.example")
	not gcp.holds(bindings, "roles/viewer", "user:a@acme.example")
}

test_logged_types_and_exemptions if {
	configs := [
		{"service": "allServices", "audit_log_configs": [
			{"log_type": "ADMIN_READ"},
			{"log_type": "DATA_WRITE", "exempted_members": ["serviceAccount:etl@acme-data-1193.iam.gserviceaccount.com"]},
		]},
		{"service": "storage.googleapis.com", "audit_log_configs": [{"log_type": "DATA_READ", "exempted_members": ["group:analysts@acme.example"]}]},
	]
	gcp.logged_types(configs) == {"ADMIN_READ", "DATA_WRITE"}
	gcp.audit_exemptions(configs) == {
		{"service": "allServices", "log_type": "DATA_WRITE", "member": "serviceAccount:etl@acme-data-1193.iam.gserviceaccount.com"},
		{"service": "storage.googleapis.com", "log_type": "DATA_READ", "member": "group:analysts@acme.example"},
	}
	gcp.logged_types([]) == set()
}

test_issuer_parts if {
	gcp.issuer_parts("https://token.actions.githubusercontent.com") == ["token.actions.githubusercontent.com", ""]
	gcp.issuer_parts("https://Token.Actions.GitHubUserContent.com/") == ["token.actions.githubusercontent.com", ""]
	gcp.issuer_parts("https://token.actions.githubusercontent.com/acme-enterprise") == ["token.actions.githubusercontent.com", "/acme-enterprise"]
	gcp.issuer_parts("https://user@gitlab.com:443") == ["gitlab.com", ""]
	gcp.issuer_parts("gitlab.com") == ["gitlab.com", ""]
}

test_multi_tenant_issuer if {
	gcp.multi_tenant_issuer("https://token.actions.githubusercontent.com")
	gcp.multi_tenant_issuer("https://gitlab.com/")
	gcp.multi_tenant_issuer("https://accounts.google.com")
	gcp.multi_tenant_issuer("https://app.terraform.io")
	gcp.multi_tenant_issuer("https://agent.buildkite.com")
	not gcp.multi_tenant_issuer("https://token.actions.githubusercontent.com/acme-enterprise")
	not gcp.multi_tenant_issuer("https://gitlab.acme.example")
	not gcp.multi_tenant_issuer("https://oidc.circleci.com/org/8f1c2a3b-4d5e-6f70-8192-a3b4c5d6e7f8")
	not gcp.multi_tenant_issuer("https://token.actions.githubusercontent.com.evil.test")
	not gcp.multi_tenant_issuer("")
}
