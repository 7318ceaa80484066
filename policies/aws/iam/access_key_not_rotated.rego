# METADATA
# title: Active access key is older than 90 days
# description: Long-lived keys accumulate copies in laptops, CI variables and logs; rotating them bounds how long a leaked key stays useful.
# custom:
#   id: WARDEN-AWS-IAM-008
#   severity: medium
#   resource_types: [aws.iam.access_key]
#   frameworks: {cis-aws-3.0: ["1.14"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   remediation: {action: aws.iam.rotate_access_key, risk: high}
package warden.aws.iam.access_key_not_rotated

import data.warden.lib.config
import data.warden.lib.time as wtime

max_days := config.setting("access_key_max_age_days", 90)

attrs := input.resource.attributes

deny contains violation if {
	attrs.status == "Active"
	wtime.older_than(attrs.created, max_days)
	violation := {"msg": sprintf(
		"access key %s of user %s was created %d days ago and has not been rotated (maximum %d)",
		[attrs.access_key_id, attrs.user_name, wtime.days_since(attrs.created), max_days],
	)}
}
