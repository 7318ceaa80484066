package warden.gcp.iam.audit_logs_not_configured_test

import data.warden.gcp.iam.audit_logs_not_configured as policy

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

test_no_audit_config_at_all if {
	policy.deny == {{
		"msg": "organization acme.example (631475985395) does not log ADMIN_READ, DATA_READ, DATA_WRITE for allServices: data read or written in every project in the organization leaves no audit trail unless a folder or project below enables it",
		"missing": ["ADMIN_READ", "DATA_READ", "DATA_WRITE"],
	}} with input as organization([])
}

test_data_read_missing if {
	{v.missing | some v in policy.deny} == {["DATA_READ"]} with input as organization([all_services(["ADMIN_READ", "DATA_WRITE"])])
}

test_per_service_configs_do_not_replace_all_services if {
	{v.missing | some v in policy.deny} == {["ADMIN_READ", "DATA_READ", "DATA_WRITE"]} with input as organization([
		{"service": "storage.googleapis.com", "audit_log_configs": [{"log_type": "ADMIN_READ"}, {"log_type": "DATA_READ"}, {"log_type": "DATA_WRITE"}]},
		{"service": "allServices", "audit_log_configs": [{"log_type": "LOG_TYPE_UNSPECIFIED"}]},
	])
}

test_near_miss_all_three_for_all_services if {
	count(policy.deny) == 0 with input as organization([all_services(["DATA_WRITE", "ADMIN_READ", "DATA_READ"])])
}

test_near_miss_all_three_split_across_entries if {
	count(policy.deny) == 0 with input as organization([all_services(["DATA_READ"]), all_services(["ADMIN_READ", "DATA_WRITE"])])
}

test_near_miss_audit_configs_not_read if {
	count(policy.deny) == 0 with input as json.remove(organization([]), ["resource/attributes/audit_configs"])
	count(policy.deny) == 0 with input as json.patch(organization([]), [{"op": "replace", "path": "/resource/attributes/audit_configs", "value": null}])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(organization([]), ["resource/name", "resource/attributes/organization_id", "resource/attributes/domain"])
	{v.msg | some v in policy.deny with input as bare} == {"IAM policy //cloudresourcemanager.googleapis.com/organizations/631475985395 does not log ADMIN_READ, DATA_READ, DATA_WRITE for allServices: data read or written in every resource the policy covers leaves no audit trail unless a folder or project below enables it"}
}
