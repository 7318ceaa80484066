# METADATA
# title: Role trusts an unknown account
# description: A trust policy naming an AWS account that is neither the role's own nor a known account lets an outside party assume the role; confirm the account belongs to a partner you still work with.
# custom:
#   id: WARDEN-AWS-IAM-006
#   severity: medium
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-3", "AC-20"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15", "A.5.19"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.unknown_account_trust

import data.warden.lib.config
import data.warden.lib.display
import data.warden.lib.iam

# Known accounts: the role's own, the accounts the snapshot covers (input.snapshot.accounts,
# which warden fills with the snapshot's own accounts), and the setting known_accounts, whose
# ids may be written as strings or numbers.
known(account) if account == input.resource.account

known(account) if account in object.get(input, ["snapshot", "accounts"], [])

known(account) if {
	some value in config.setting("known_accounts", [])
	account_id(value) == account
}

account_id(value) := value if is_string(value)

account_id(value) := sprintf("%012d", [value]) if is_number(value)

deny contains violation if {
	some [account, _] in iam.foreign_trusts
	not known(account)
	principals := sort({value | some [account2, value] in iam.foreign_trusts; account2 == account})
	violation := {
		"msg": sprintf(
			"role %s trusts account %s (%s), which is not a known account",
			[display.name, account, concat(", ", principals)],
		),
		"key": account,
		"principals": principals,
	}
}
