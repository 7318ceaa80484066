# METADATA
# title: Service account has an enabled user-managed key
# description: A user-managed key is a private key downloaded out of Google's reach; whoever copies it from a laptop, a CI variable or a repository acts as the service account from anywhere until the key is disabled. Workloads on Google Cloud need none (attached service accounts, Workload Identity), and outside it Workload Identity Federation replaces them. Disabled and expired keys no longer authenticate and are not reported.
# custom:
#   id: WARDEN-GCP-IAM-008
#   severity: medium
#   resource_types: [gcp.iam.service_account_key]
#   frameworks: {cis-gcp-2.0: ["1.4"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_sa_no_user_managed_keys]
#   remediation: {action: gcp.iam.disable_service_account_key, risk: high}
package warden.gcp.iam.user_managed_key

import data.warden.lib.display
import data.warden.lib.time as wtime

# A key past its valid_before no longer authenticates. A key without expiry has a
# valid_before of 9999-12-31T23:59:59Z, past what time.parse_rfc3339_ns reads.
expired if {
	valid_before := input.resource.attributes.valid_before
	is_string(valid_before)
	not wtime.far_future(valid_before)
	time.parse_rfc3339_ns(valid_before) <= time.now_ns()
}

# key_type == "USER_MANAGED" lets OPA's rule index skip Google's keys without evaluating
# the rule.
deny contains violation if {
	input.resource.attributes.key_type == "USER_MANAGED"
	not input.resource.attributes.disabled
	not expired
	violation := {"msg": sprintf(
		"service account %s has an enabled user-managed key %s (created %s)",
		[display.attribute("service_account", "unknown"), display.attribute("key_id", display.uid), created],
	)}
}

created := substring(input.resource.attributes.valid_after, 0, 10) if {
	is_string(input.resource.attributes.valid_after)
	count(input.resource.attributes.valid_after) >= 10
} else := "at an unknown time"
