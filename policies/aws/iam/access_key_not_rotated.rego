# METADATA
# title: Active access key is older than 90 days
# description: Long-lived keys accumulate copies in laptops, CI variables and logs; rotating them bounds how long a leaked key stays useful.
# custom:
#   id: WARDEN-AWS-IAM-008
#   severity: medium
#   resource_types: [aws.iam.access_key]
#   frameworks: {cis-aws-3.0: ["1.14"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_rotate_access_key_90_days]
#   remediation: {action: aws.iam.rotate_access_key, risk: high}
package warden.aws.iam.access_key_not_rotated

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
max_days := n if {
	n := data.warden.config.access_key_max_age_days
} else := 90

# wtime.older_than(ts, max_days) ⟺ time.parse_rfc3339_ns(ts) <= cutoff. time.add_date
# computes it for a whole number of days without big-number arithmetic (as
# wtime.older_than_bound does, without the cost of a function call); any other threshold
# goes to wtime.older_than_bound.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, -1 - max_days)
} else := wtime.older_than_bound(max_days)

# status == "Active" lets OPA's rule index skip inactive keys without evaluating the rule.
deny contains violation if {
	input.resource.attributes.status == "Active"
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= cutoff
	violation := {"msg": sprintf(
		"access key %s of user %s was created %d days ago and has not been rotated (maximum %d)",
		[key_id, user, wtime.days_since(created), max_days],
	)}
}

# The key and its user in messages, with fallbacks: the uid, the user's ARN.
key_id := display.attribute("access_key_id", display.uid)

user := display.attribute("user_name", display.attribute("user_arn", "unknown"))
