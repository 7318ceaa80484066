# METADATA
# title: Access key has not been used for 90 days
# description: An active access key nobody uses is a standing credential that can only leak; deactivate it until someone asks for it back.
# custom:
#   id: WARDEN-AWS-IAM-007
#   severity: medium
#   resource_types: [aws.iam.access_key]
#   frameworks: {cis-aws-3.0: ["1.12"], nist-800-53-r5: ["AC-2(3)", "IA-4"], pci-dss-4.0: ["8.2.6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   prowler: [iam_user_accesskey_unused]
#   remediation: {action: aws.iam.deactivate_access_key, risk: medium}
package warden.aws.iam.access_key_unused

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
max_days := n if {
	n := data.warden.config.access_key_unused_days
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
	last_used := input.resource.attributes.last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) <= cutoff
	violation := {"msg": sprintf(
		"access key %s of user %s has not been used for %d days (last used %s)",
		[key_id, user, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

# Never used (last_used absent, null or empty): its age counts from its creation.
deny contains violation if {
	input.resource.attributes.status == "Active"
	object.get(input.resource.attributes, "last_used", null) in {null, ""}
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= cutoff
	violation := {"msg": sprintf(
		"access key %s of user %s has never been used since it was created %d days ago",
		[key_id, user, wtime.days_since(created)],
	)}
}

# The key and its user in messages, with fallbacks: the uid, the user's ARN.
key_id := display.attribute("access_key_id", display.uid)

user := display.attribute("user_name", display.attribute("user_arn", "unknown"))
