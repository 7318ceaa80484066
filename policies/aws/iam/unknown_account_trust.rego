# METADATA
# title: Role trusts an unknown account
# description: A trust policy naming an AWS account that is neither the role's own nor a known account lets an outside party assume the role; confirm the account belongs to a partner you still work with. No fix is automated, since only the role's owner knows whether the partner still needs it, and removing the account breaks the integration.
# custom:
#   id: WARDEN-AWS-IAM-006
#   severity: medium
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-3", "AC-20"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15", "A.5.19"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.unknown_account_trust

import data.warden.lib.display
import data.warden.lib.iam

deny contains violation if {
	some [account, _] in iam.unknown_trusts
	principals := sort({value | some [account2, value] in iam.unknown_trusts; account2 == account})
	violation := {
		"msg": sprintf(
			"role %s trusts account %s (%s), which is not a known account",
			[display.name, account, concat(", ", principals)],
		),
		"key": account,
		"principals": principals,
	}
}
