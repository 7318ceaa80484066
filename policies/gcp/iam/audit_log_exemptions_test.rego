package warden.gcp.iam.audit_log_exemptions_test

import data.warden.gcp.iam.audit_log_exemptions as policy

project(audit_configs) := {"resource": {
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
		"bindings": [{"role": "roles/owner", "members": ["user:maria.lopez@acme.example"], "condition": null}],
		"audit_configs": audit_configs,
	},
}}

organization(audit_configs) := {"resource": {
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
		"bindings": [{"role": "roles/resourcemanager.organizationAdmin", "members": ["group:gcp-admins@acme.example"], "condition": null}],
		"audit_configs": audit_configs,
	},
}}

all_services(types) := {"service": "allServices", "audit_log_configs": [{"log_type": t} | some t in types]}

test_exempted_service_account if {
	policy.deny == {{
		"msg": "project acme-prod-4821 exempts serviceAccount:etl-runner@acme-prod-4821.iam.gserviceaccount.com from DATA_READ audit logs of allServices",
		"key": "allServices/DATA_READ/serviceAccount:etl-runner@acme-prod-4821.iam.gserviceaccount.com",
		"service": "allServices",
		"log_type": "DATA_READ",
		"member": "serviceAccount:etl-runner@acme-prod-4821.iam.gserviceaccount.com",
	}} with input as project([{"service": "allServices", "audit_log_configs": [
		{"log_type": "ADMIN_READ"},
		{"log_type": "DATA_READ", "exempted_members": ["serviceAccount:etl-runner@acme-prod-4821.iam.gserviceaccount.com"]},
		{"log_type": "DATA_WRITE", "exempted_members": []},
	]}])
}

test_exemptions_per_service_and_type if {
	{v.key | some v in policy.deny} == {
		"bigquery.googleapis.com/DATA_READ/group:analysts@acme.example",
		"bigquery.googleapis.com/DATA_WRITE/group:analysts@acme.example",
	} with input as organization([{"service": "bigquery.googleapis.com", "audit_log_configs": [
		{"log_type": "DATA_READ", "exempted_members": ["group:analysts@acme.example"]},
		{"log_type": "DATA_WRITE", "exempted_members": ["group:analysts@acme.example"]},
	]}])
}

test_near_miss_no_exemptions if {
	count(policy.deny) == 0 with input as organization([all_services(["ADMIN_READ", "DATA_READ", "DATA_WRITE"])])
	count(policy.deny) == 0 with input as project([])
}

test_near_miss_audit_configs_not_read if {
	count(policy.deny) == 0 with input as json.remove(project([]), ["resource/attributes/audit_configs"])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	given := project([{"service": "allServices", "audit_log_configs": [{"log_type": "DATA_WRITE", "exempted_members": ["user:dev.singh@acme.example"]}]}])
	count(policy.deny) == 1 with input as json.remove(given, ["resource/name", "resource/attributes/project_id"])
}
