# METADATA
# title: Root user has access keys
# description: Root access keys carry unrestricted, unscopable power over the account and cannot be limited by any policy; delete them. No fix is automated, as deleting root access keys takes a root session (the root user signing in, or the management account's centralized root access), and whatever still uses the keys must first move to a role.
# custom:
#   id: WARDEN-AWS-IAM-011
#   severity: critical
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.4"], nist-800-53-r5: ["AC-6(2)", "IA-2"], soc2: ["CC6.1"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_no_root_access_key]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_access_keys

import data.warden.lib.display

deny contains violation if {
	input.resource.attributes.access_keys_active > 0
	violation := {"msg": sprintf(
		"the root user of account %s has %d active access key(s)",
		[display.account, input.resource.attributes.access_keys_active],
	)}
}
