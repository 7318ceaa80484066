# METADATA
# title: Default service account has an enabled user-managed key
# description: The Compute Engine and App Engine default service accounts hold roles/editor on their project unless someone removed it, and every VM or app created without a service account runs as them; a downloaded key of one is a portable, long-lived editor credential for the project. Disabling the key (risk high) breaks whatever still signs in with it.
# custom:
#   id: WARDEN-GCP-IAM-016
#   severity: high
#   resource_types: [gcp.iam.service_account_key]
#   frameworks: {cis-gcp-2.0: ["1.4"], nist-800-53-r5: ["AC-6", "IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   remediation: {action: gcp.iam.disable_service_account_key, risk: high}
package warden.gcp.iam.default_service_account_key

import data.warden.lib.gcp
import data.warden.lib.time as wtime

expired if {
	valid_before := input.resource.attributes.valid_before
	is_string(valid_before)
	not wtime.far_future(valid_before)
	time.parse_rfc3339_ns(valid_before) <= time.now_ns()
}

# The service account's address is the only field that decides which account it is: a
# key without one is not judged.
deny contains violation if {
	input.resource.attributes.key_type == "USER_MANAGED"
	email := input.resource.attributes.service_account
	is_string(email)
	gcp.default_service_account(email)
	not input.resource.attributes.disabled
	not expired
	violation := {"msg": sprintf(
		"default service account %s has an enabled user-managed key %s: a portable credential for an account that is editor of its project by default",
		[email, key_id],
	)}
}

key_id := k if {
	k := input.resource.attributes.key_id
	is_string(k)
	k != ""
} else := input.resource.uid
