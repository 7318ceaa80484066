# METADATA
# title: Access key has not been used for 90 days
# description: An active access key nobody uses is a standing credential that can only leak; deactivate it until someone asks for it back.
# custom:
#   id: WARDEN-AWS-IAM-007
#   severity: medium
#   resource_types: [aws.iam.access_key]
#   frameworks: {cis-aws-3.0: ["1.12"], nist-800-53-r5: ["AC-2(3)", "IA-4"], pci-dss-4.0: ["8.2.6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: aws.iam.deactivate_access_key, risk: medium}
package warden.aws.iam.access_key_unused

import data.warden.lib.config
import data.warden.lib.time as wtime

max_days := config.setting("access_key_unused_days", 90)

attrs := input.resource.attributes

last_used := object.get(attrs, "last_used", null)

deny contains violation if {
	attrs.status == "Active"
	wtime.older_than(last_used, max_days)
	violation := {"msg": sprintf(
		"access key %s of user %s has not been used for %d days (last used %s)",
		[attrs.access_key_id, attrs.user_name, wtime.days_since(last_used), substring(last_used, 0, 10)],
	)}
}

deny contains violation if {
	attrs.status == "Active"
	wtime.never(last_used)
	wtime.older_than(attrs.created, max_days)
	violation := {"msg": sprintf(
		"access key %s of user %s has never been used since it was created %d days ago",
		[attrs.access_key_id, attrs.user_name, wtime.days_since(attrs.created)],
	)}
}
