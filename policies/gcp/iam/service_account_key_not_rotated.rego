# METADATA
# title: User-managed service account key is older than 90 days
# description: A downloaded service account key is a long-lived credential that is copied into CI variables, laptops and images; rotating it bounds how long a leaked copy stays useful.
# custom:
#   id: WARDEN-GCP-IAM-003
#   severity: medium
#   resource_types: [gcp.iam.service_account_key]
#   frameworks: {cis-gcp-2.0: ["1.7"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_sa_user_managed_key_rotate_90_days]
#   remediation: {action: gcp.iam.disable_service_account_key, risk: high}
package warden.gcp.iam.service_account_key_not_rotated

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
max_days := n if {
	n := data.warden.config.service_account_key_max_age_days
} else := 90

# wtime.older_than(ts, max_days) ⟺ time.parse_rfc3339_ns(ts) <= cutoff. time.add_date
# computes it for a whole number of days without big-number arithmetic (as
# wtime.older_than_bound does, without the cost of a function call); any other threshold
# goes to wtime.older_than_bound.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, -1 - max_days)
} else := wtime.older_than_bound(max_days)

# A key past its valid_before no longer authenticates. A key without expiry has a
# valid_before of 9999-12-31T23:59:59Z, past what time.parse_rfc3339_ns reads.
expired if {
	valid_before := input.resource.attributes.valid_before
	is_string(valid_before)
	not wtime.far_future(valid_before)
	time.parse_rfc3339_ns(valid_before) <= time.now_ns()
}

# key_type == "USER_MANAGED" lets OPA's rule index skip Google's keys without evaluating
# the rule; the age comes next, as most keys are young.
deny contains violation if {
	input.resource.attributes.key_type == "USER_MANAGED"
	valid_after := input.resource.attributes.valid_after
	is_string(valid_after)
	time.parse_rfc3339_ns(valid_after) <= cutoff
	not input.resource.attributes.disabled
	not expired
	violation := {"msg": sprintf(
		"user-managed key %s of service account %s was created %d days ago and has not been rotated (maximum %d)",
		[display.attribute("key_id", display.uid), display.attribute("service_account", "unknown"), wtime.days_since(valid_after), max_days],
	)}
}
