# METADATA
# title: Console password has not been used for 45 days
# description: A console password nobody signs in with is an open door for whoever guesses or phishes it; remove the login profile.
# custom:
#   id: WARDEN-AWS-IAM-015
#   severity: medium
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.12"], nist-800-53-r5: ["AC-2(3)"], pci-dss-4.0: ["8.2.6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   prowler: [iam_user_console_access_unused]
#   remediation: {action: aws.iam.delete_login_profile, risk: medium}
package warden.aws.iam.console_password_unused

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
max_days := n if {
	n := data.warden.config.password_unused_days
} else := 45

# wtime.older_than(ts, max_days) ⟺ time.parse_rfc3339_ns(ts) <= cutoff. time.add_date
# computes it for a whole number of days without big-number arithmetic (as
# wtime.older_than_bound does, without the cost of a function call); any other threshold
# goes to wtime.older_than_bound.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, -1 - max_days)
} else := wtime.older_than_bound(max_days)

# password_enabled is a bool: comparing it with true lets OPA's rule index skip users
# without a password without evaluating the rule.
deny contains violation if {
	input.resource.attributes.password_enabled == true
	last_used := input.resource.attributes.password_last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) <= cutoff
	violation := {"msg": sprintf(
		"user %s has not signed in to the console for %d days (last %s)",
		[display.name, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

# A password never used counts from the user's creation, unless it was set recently: a
# new password for an old user gets its own grace period.
deny contains violation if {
	input.resource.attributes.password_enabled == true
	object.get(input.resource.attributes, "password_last_used", null) in {null, ""}
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= cutoff
	not set_recently
	violation := {"msg": sprintf(
		"user %s has a console password that was never used (user created %d days ago)",
		[display.name, wtime.days_since(created)],
	)}
}

# wtime.days_since(password_last_changed) <= max_days
set_recently if {
	changed := input.resource.attributes.password_last_changed
	is_string(changed)
	time.parse_rfc3339_ns(changed) > cutoff
}
