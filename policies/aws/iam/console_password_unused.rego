# METADATA
# title: Console password has not been used for 45 days
# description: A console password nobody signs in with is an open door for whoever guesses or phishes it; remove the login profile.
# custom:
#   id: WARDEN-AWS-IAM-015
#   severity: medium
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.12"], nist-800-53-r5: ["AC-2(3)"], pci-dss-4.0: ["8.2.6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: aws.iam.delete_login_profile, risk: medium}
package warden.aws.iam.console_password_unused

import data.warden.lib.config
import data.warden.lib.time as wtime

max_days := config.setting("password_unused_days", 45)

attrs := input.resource.attributes

last_used := object.get(attrs, "password_last_used", null)

deny contains violation if {
	attrs.password_enabled == true
	wtime.older_than(last_used, max_days)
	violation := {"msg": sprintf(
		"user %s has not signed in to the console for %d days (last %s)",
		[input.resource.name, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

# A password never used counts from the user's creation, unless it was set recently: a
# new password for an old user gets its own grace period.
deny contains violation if {
	attrs.password_enabled == true
	wtime.never(last_used)
	wtime.older_than(attrs.created, max_days)
	not set_recently
	violation := {"msg": sprintf(
		"user %s has a console password that was never used (user created %d days ago)",
		[input.resource.name, wtime.days_since(attrs.created)],
	)}
}

set_recently if wtime.days_since(attrs.password_last_changed) <= max_days
