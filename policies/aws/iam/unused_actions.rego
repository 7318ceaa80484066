# METADATA
# title: Principal is granted actions it has not used for 90 days
# description: >-
#   In the services a user, role or group does use, IAM's action-level last-accessed data
#   shows granted actions it has not used for the whole window (setting
#   unused_access_window_days, 90 days): a role that only reads S3 but may delete objects
#   keeps a risk it does not need. Narrow the policies to the actions used. Services unused
#   as a whole are WARDEN-AWS-IAM-034's findings, not repeated here. An action counts as
#   unused only when the data proves it: incomplete data, a principal younger than the
#   window, service-linked roles and principals tagged warden-least-privilege: exempt are
#   not judged. The fix removes, from the principal's inline policies, the actions the data
#   shows unused that they name one by one, behind approval (high risk); a wildcard within
#   a used service stays, as the data cannot speak for the actions AWS does not track.
#   From IAM Access Analyzer's findings only an analyzer whose age is at least the window
#   speaks, and the message does not count the actions tracked.
# custom:
#   id: WARDEN-AWS-IAM-035
#   severity: medium
#   resource_types: [aws.iam.user, aws.iam.role, aws.iam.group]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(7)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: aws.iam.rightsize_inline_policy, risk: high, params: [window_days]}
package warden.aws.iam.unused_actions

import data.warden.lib.display
import data.warden.lib.usage

# One finding per principal, without a key: its fingerprint stays the same while the list
# of actions and the days change.
deny contains violation if {
	unused := usage.unused_actions
	count(unused) > 0
	services := sort({u.service | some u in unused})
	violation := {
		"msg": sprintf(
			"%s %s %s; unused for %d days or more in %s: %s; data as of %s",
			[
				usage.kind, display.name, share(count(unused)), usage.window_days, concat(", ", services),
				usage.listed([sprintf("%s (%s)", [u.action, u.evidence]) | some u in unused]),
				usage.day(usage.facts.as_of),
			],
		),
		"unused_actions": [{"action": u.action, "last_used": u.last_used} | some u in unused],
		"window_days": usage.window_days,
		"as_of": usage.facts.as_of,
	}
}

# share(n) says how much of the tracked actions the principal uses: counted when the data
# lists every action tracked (Access Advisor); Access Analyzer's findings list only the
# unused ones.
share(n) := sprintf("uses %d of the %d actions tracked in the services it uses", [usage.tracked_action_count - n, usage.tracked_action_count]) if {
	usage.all_granted
} else := "is granted actions it does not use (IAM Access Analyzer)"
