package warden.gcp.iam.kms_separation_of_duties_test

import data.warden.gcp.iam.kms_separation_of_duties as sod

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

test_admin_also_decrypts if {
	sod.deny == {{
		"msg": "project acme-prod-4821 grants serviceAccount:key-rotator@acme-prod-4821.iam.gserviceaccount.com both roles/cloudkms.admin and roles/cloudkms.cryptoKeyEncrypterDecrypter: one identity both manages the keys of the project and uses them on data",
		"key": "roles/cloudkms.cryptoKeyEncrypterDecrypter/serviceAccount:key-rotator@acme-prod-4821.iam.gserviceaccount.com",
		"role": "roles/cloudkms.cryptoKeyEncrypterDecrypter",
		"member": "serviceAccount:key-rotator@acme-prod-4821.iam.gserviceaccount.com",
	}} with input as project([
		binding("roles/cloudkms.admin", ["serviceAccount:key-rotator@acme-prod-4821.iam.gserviceaccount.com"]),
		binding("roles/cloudkms.cryptoKeyEncrypterDecrypter", ["serviceAccount:key-rotator@acme-prod-4821.iam.gserviceaccount.com", "serviceAccount:app-runtime@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_one_violation_per_crypto_role if {
	{v.role | some v in sod.deny} == {"roles/cloudkms.cryptoKeyEncrypter", "roles/cloudkms.cryptoKeyDecrypter"} with input as organization([
		binding("roles/cloudkms.cryptoKeyEncrypter", ["group:kms-admins@acme.example"]),
		binding("roles/cloudkms.cryptoKeyDecrypter", ["group:kms-admins@acme.example"]),
		binding("roles/cloudkms.admin", ["group:kms-admins@acme.example"]),
	])
}

test_near_miss_separate_members if {
	count(sod.deny) == 0 with input as project([
		binding("roles/cloudkms.admin", ["group:kms-admins@acme.example"]),
		binding("roles/cloudkms.cryptoKeyEncrypterDecrypter", ["serviceAccount:app-runtime@acme-prod-4821.iam.gserviceaccount.com"]),
	])
}

test_near_miss_admin_with_viewer_and_signer_roles if {
	count(sod.deny) == 0 with input as folder([
		binding("roles/cloudkms.admin", ["group:kms-admins@acme.example"]),
		binding("roles/cloudkms.viewer", ["group:kms-admins@acme.example"]),
		binding("roles/cloudkms.signerVerifier", ["group:kms-admins@acme.example"]),
	])
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_ids_still_violates if {
	bare := json.remove(project([binding("roles/cloudkms.admin", ["user:dev.singh@acme.example"]), binding("roles/cloudkms.cryptoKeyDecrypter", ["user:dev.singh@acme.example"])]), ["resource/name", "resource/attributes/project_id"])
	count(sod.deny) == 1 with input as bare
}
