# METADATA
# title: Root user was used recently
# description: The root user can do anything in the account and no policy limits it; the few tasks that need it are rare, so a recent sign-in with its password or a recent call with its access keys is either such a task or someone else holding its credentials. No fix is automated, as whether a use was legitimate and who holds the root credentials are questions for people, and warden cannot keep the root user from signing in.
# custom:
#   id: WARDEN-AWS-IAM-025
#   severity: high
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.7"], nist-800-53-r5: ["AC-6(2)"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_avoid_root_usage]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_used_recently

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation. A use at
# most max_days whole days ago is recent (Prowler's maximum_root_access_days, default 1).
max_days := n if {
	n := data.warden.config.root_usage_days
} else := 1

# Recent ⟺ not wtime.older_than(ts, max_days) ⟺ time.parse_rfc3339_ns(ts) > cutoff.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, -1 - max_days)
} else := wtime.older_than_bound(max_days)

deny contains violation if {
	last_used := input.resource.attributes.password_last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) > cutoff
	violation := {
		"msg": sprintf("the root user of account %s signed in with its password %s (%s)", [display.account, ago(last_used), last_used]),
		"key": "password",
	}
}

# access_keys_last_used is the latest use of either root key (from the credential report).
deny contains violation if {
	last_used := input.resource.attributes.access_keys_last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) > cutoff
	violation := {
		"msg": sprintf("an access key of the root user of account %s was used %s (%s)", [display.account, ago(last_used), last_used]),
		"key": "access_keys",
	}
}

# ago(ts) says how long ago ts was, in whole days.
ago(ts) := "less than a day ago" if {
	wtime.days_since(ts) < 1
} else := "1 day ago" if {
	wtime.days_since(ts) == 1
} else := sprintf("%d days ago", [wtime.days_since(ts)])
