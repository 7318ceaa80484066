# METADATA
# title: Same member administers KMS keys and encrypts or decrypts with them
# description: roles/cloudkms.admin manages keys and who may use them; the CryptoKey Encrypter/Decrypter roles use them on data. One member holding both (on the project, or on a folder or the organisation above it) can decrypt what the keys protect, or destroy the keys of data it wrote, with nobody else involved. The fix removes the encrypt/decrypt role from that member (risk high, as applications running as it can no longer read or write their data).
# custom:
#   id: WARDEN-GCP-IAM-010
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["1.11"], nist-800-53-r5: ["AC-5"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.3"]}
#   prowler: [iam_role_kms_enforce_separation_of_duties]
#   remediation: {action: gcp.iam.remove_binding_member, risk: high, params: [role, member]}
package warden.gcp.iam.kms_separation_of_duties

import data.warden.lib.gcp

bindings := input.resource.attributes.bindings

admin_role := "roles/cloudkms.admin"

crypto_roles := {
	"roles/cloudkms.cryptoKeyEncrypterDecrypter",
	"roles/cloudkms.cryptoKeyEncrypter",
	"roles/cloudkms.cryptoKeyDecrypter",
}

# One violation per encrypt/decrypt role the admin also holds: each is one fix.
deny contains violation if {
	roles := crypto_roles
	some b in bindings
	role := b.role
	role in roles
	some member in b.members
	gcp.holds(bindings, admin_role, member)
	violation := {
		"msg": sprintf(
			"%s grants %s both %s%s and %s%s: one identity both manages the keys of %s and uses them on data",
			[
				gcp.policy_holder, member,
				admin_role, gcp.condition_note(bindings, admin_role, member),
				role, gcp.condition_note(bindings, role, member),
				gcp.policy_reach,
			],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
	}
}
