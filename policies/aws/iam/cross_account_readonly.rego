# METADATA
# title: Role gives ReadOnlyAccess to an unknown account
# description: >-
#   A role with the ReadOnlyAccess managed policy that an account outside the known
#   accounts (see WARDEN-AWS-IAM-006 and the known_accounts setting) may assume lets that
#   account read the configuration and much of the data of the whole account: objects,
#   tables, logs, parameters. No fix is automated, since only the role's owner knows
#   whether the outside party needs it, and the right change (narrower policies, or no
#   trust) breaks its integration either way.
# custom:
#   id: WARDEN-AWS-IAM-022
#   severity: high
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6"]}
#   prowler: [iam_role_cross_account_readonlyaccess_policy]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.cross_account_readonly

import data.warden.lib.display
import data.warden.lib.iam

# read_only_access holds when the role has the ReadOnlyAccess managed policy attached.
read_only_access if {
	some p in input.resource.attributes.attached_policies
	regex.match(`^arn:aws[a-z-]*:iam::aws:policy/ReadOnlyAccess$`, p.arn)
}

deny contains violation if {
	read_only_access
	some [account, _] in iam.unknown_trusts
	principals := sort({value | some [account2, value] in iam.unknown_trusts; account2 == account})
	violation := {
		"msg": sprintf(
			"role %s has ReadOnlyAccess and trusts account %s (%s), which is not a known account: that account can read the whole account",
			[display.name, account, concat(", ", principals)],
		),
		"key": account,
		"principals": principals,
	}
}
