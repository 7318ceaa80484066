# METADATA
# title: Role has not been used for 90 days
# description: A role nobody assumes keeps its permissions and its trust open for nothing; review it and delete it if it is no longer needed. No fix is automated, as a role can be needed rarely (disaster recovery, break-glass, yearly jobs), and deleting it cannot be undone.
# custom:
#   id: WARDEN-AWS-IAM-016
#   severity: low
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-2(3)", "AC-6(7)"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.role_unused

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
max_days := n if {
	n := data.warden.config.role_unused_days
} else := 90

# wtime.older_than(ts, max_days) ⟺ time.parse_rfc3339_ns(ts) <= cutoff. time.add_date
# computes it for a whole number of days without big-number arithmetic (as
# wtime.older_than_bound does, without the cost of a function call); any other threshold
# goes to wtime.older_than_bound.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, -1 - max_days)
} else := wtime.older_than_bound(max_days)

# Service-linked roles belong to the AWS service that created them and cannot be deleted
# while the service uses them.
service_linked if input.resource.attributes.service_linked == true

service_linked if startswith(object.get(input.resource.attributes, "path", ""), "/aws-service-role/")

# The age comes first: most roles were used recently.
deny contains violation if {
	last_used := input.resource.attributes.last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) <= cutoff
	not service_linked
	violation := {"msg": sprintf(
		"role %s has not been used for %d days (last used %s)",
		[display.name, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

deny contains violation if {
	object.get(input.resource.attributes, "last_used", null) in {null, ""}
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= cutoff
	not service_linked
	violation := {"msg": sprintf(
		"role %s has never been used since it was created %d days ago",
		[display.name, wtime.days_since(created)],
	)}
}
