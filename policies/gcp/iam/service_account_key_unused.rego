# METADATA
# title: User-managed service account key has not authenticated for 90 days
# description: >-
#   The Policy Analyzer's last-authentication activity shows a user-managed key of a
#   service account that authenticated no call to a Google API for the whole window
#   (setting unused_access_window_days, 90 days): a credential nobody uses only waits to
#   leak. Disable it; delete it once nothing broke. Only proven disuse counts: the key
#   must be older than the window, and either its last authentication is before the
#   window or Google reports none over an observation period that covers the window;
#   disabled and expired keys are left out.
#   Without the activity data (targets.gcp.activity) nothing is judged.
# custom:
#   id: WARDEN-GCP-IAM-022
#   severity: medium
#   resource_types: [gcp.iam.service_account_key]
#   frameworks: {cis-gcp-2.0: ["1.7"], nist-800-53-r5: ["AC-2(3)", "IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: gcp.iam.disable_service_account_key, risk: medium}
package warden.gcp.iam.service_account_key_unused

import data.warden.lib.activity
import data.warden.lib.display
import data.warden.lib.time as wtime

deny contains violation if {
	input.resource.attributes.key_type == "USER_MANAGED"
	not input.resource.attributes.disabled
	valid_after := input.resource.attributes.valid_after
	is_string(valid_after)
	time.parse_rfc3339_ns(valid_after) <= activity.window_start_ns
	not expired
	evidence := activity.unused_evidence
	violation := {
		"msg": sprintf(
			"user-managed key %s of service account %s, created %d days ago, %s",
			[display.attribute("key_id", display.uid), display.attribute("service_account", "unknown"), wtime.days_since(valid_after), evidence],
		),
		"window_days": activity.window_days,
	}
}

# An expired key authenticates nothing: there is no credential left to disable. A key
# without expiry has a valid_before of 9999-12-31T23:59:59Z, past what
# time.parse_rfc3339_ns reads.
expired if {
	valid_before := input.resource.attributes.valid_before
	is_string(valid_before)
	not wtime.far_future(valid_before)
	time.parse_rfc3339_ns(valid_before) <= time.now_ns()
}
