# METADATA
# title: Role has not been used for 90 days
# description: A role nobody assumes keeps its permissions and its trust open for nothing; review it and delete it if it is no longer needed.
# custom:
#   id: WARDEN-AWS-IAM-016
#   severity: low
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-2(3)", "AC-6(7)"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.role_unused

import data.warden.lib.config
import data.warden.lib.time as wtime

max_days := config.setting("role_unused_days", 90)

attrs := input.resource.attributes

last_used := object.get(attrs, "last_used", null)

# Service-linked roles belong to the AWS service that created them and cannot be deleted
# while the service uses them.
service_linked if attrs.service_linked == true

service_linked if startswith(object.get(attrs, "path", ""), "/aws-service-role/")

deny contains violation if {
	not service_linked
	wtime.older_than(last_used, max_days)
	violation := {"msg": sprintf(
		"role %s has not been used for %d days (last used %s)",
		[input.resource.name, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

deny contains violation if {
	not service_linked
	wtime.never(last_used)
	wtime.older_than(attrs.created, max_days)
	violation := {"msg": sprintf(
		"role %s has never been used since it was created %d days ago",
		[input.resource.name, wtime.days_since(attrs.created)],
	)}
}
