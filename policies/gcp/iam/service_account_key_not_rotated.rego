# METADATA
# title: User-managed service account key is older than 90 days
# description: A downloaded service account key is a long-lived credential that is copied into CI variables, laptops and images; rotating it bounds how long a leaked copy stays useful.
# custom:
#   id: WARDEN-GCP-IAM-003
#   severity: medium
#   resource_types: [gcp.iam.service_account_key]
#   frameworks: {cis-gcp-2.0: ["1.7"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   remediation: {action: gcp.iam.disable_service_account_key, risk: high}
package warden.gcp.iam.service_account_key_not_rotated

import data.warden.lib.config
import data.warden.lib.time as wtime

max_days := config.setting("service_account_key_max_age_days", 90)

attrs := input.resource.attributes

# A key past its valid_before no longer authenticates.
expired if {
	is_string(attrs.valid_before)
	time.parse_rfc3339_ns(attrs.valid_before) <= time.now_ns()
}

deny contains violation if {
	attrs.key_type == "USER_MANAGED"
	not attrs.disabled
	not expired
	wtime.older_than(attrs.valid_after, max_days)
	violation := {"msg": sprintf(
		"user-managed key %s of service account %s was created %d days ago and has not been rotated (maximum %d)",
		[attrs.key_id, attrs.service_account, wtime.days_since(attrs.valid_after), max_days],
	)}
}
