# METADATA
# title: Service account has not authenticated for 90 days
# description: >-
#   The Policy Analyzer's last-authentication activity shows a service account whose last
#   call to a Google API was before the window (setting unused_access_window_days, 90
#   days): its roles, and anyone who may impersonate it, keep access nobody uses. Disable
#   the account (it can be enabled again), then remove it and its bindings once nothing
#   broke. Only proven disuse counts: an account Google reports no authentication for is
#   not judged, since the API gives no creation time and a new account has not used
#   anything yet; Google's default compute service account is left out, as instances use
#   it without calling as it. Without the activity data (targets.gcp.activity) nothing is
#   judged. No fix is automated.
# custom:
#   id: WARDEN-GCP-IAM-023
#   severity: low
#   resource_types: [gcp.iam.service_account]
#   frameworks: {nist-800-53-r5: ["AC-2(3)", "AC-6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.service_account_unused

import data.warden.lib.activity
import data.warden.lib.display

deny contains violation if {
	not input.resource.attributes.disabled
	not input.resource.attributes.default_compute
	last := input.resource.attributes.last_authenticated
	is_string(last)
	evidence := activity.unused_evidence
	violation := {
		"msg": sprintf("service account %s %s", [display.attribute("email", display.uid), evidence]),
		"last_authenticated": last,
		"window_days": activity.window_days,
	}
}
