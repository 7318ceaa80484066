# METADATA
# title: Principal is granted services it has not used for 90 days
# description: >-
#   IAM's last-accessed data shows services a user, role or group is granted but has not
#   used for the whole window (setting unused_access_window_days, 90 days): permissions
#   nobody uses only widen what a leaked credential or a mistake can reach. Remove the
#   services from the principal's policies. A service counts as unused only when the data
#   proves it: incomplete data, a principal younger than the window, service-linked roles
#   and principals tagged warden-least-privilege: exempt are not judged. The fix narrows
#   the principal's inline policies to what it used, behind approval (high risk: a rarely
#   used service, for disaster recovery or a yearly job, is a person's call); managed
#   policies shared with other principals are left to a person. From IAM Access
#   Analyzer's unused-access findings (which list only what is unused) only an analyzer
#   whose age is at least the window speaks, and the message does not count the services
#   used; the fix then leaves "*" as it is.
# custom:
#   id: WARDEN-AWS-IAM-034
#   severity: medium
#   resource_types: [aws.iam.user, aws.iam.role, aws.iam.group]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(7)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: aws.iam.rightsize_inline_policy, risk: high, params: [window_days]}
package warden.aws.iam.unused_services

import data.warden.lib.display
import data.warden.lib.usage

# One finding per principal, without a key: its fingerprint stays the same while the list
# of services and the days change.
deny contains violation if {
	unused := usage.unused_services
	count(unused) > 0
	violation := object.union(
		{
			"msg": sprintf(
				"%s %s %s; unused for %d days or more: %s; data as of %s%s",
				[
					usage.kind, display.name, share, usage.window_days,
					usage.listed([sprintf("%s (%s)", [u.service, u.evidence]) | some u in unused]),
					usage.day(usage.facts.as_of), source_note,
				],
			),
			"unused_services": [{"service": u.service, "last_used": u.last_used} | some u in unused],
			"window_days": usage.window_days,
			"as_of": usage.facts.as_of,
		},
		used,
	)
}

# share says how much of its grants the principal uses: counted when the data lists every
# service granted (Access Advisor); with Access Analyzer's findings, which list only what
# is unused, the services used are unknown and are not counted.
share := sprintf("uses %d of %d services it is granted", [count(usage.used_services), count(usage.facts.services)]) if {
	usage.all_granted
} else := "is granted services it does not use"

# used lists the services used, where they are known.
used := {"used_services": usage.used_services} if {
	usage.all_granted
} else := {}

# source_note names the source when it is not the default.
source_note := "" if {
	usage.all_granted
} else := " (IAM Access Analyzer)"
