# METADATA
# title: Password policy does not require every character class
# description: Without rules requiring lowercase and uppercase letters, numbers and symbols, IAM users may choose passwords from a small alphabet (all lowercase, all digits) that fall to guessing far sooner; one finding per class the policy does not require.
# custom:
#   id: WARDEN-AWS-IAM-027
#   severity: medium
#   resource_types: [aws.iam.password_policy]
#   frameworks: {nist-800-53-r5: ["IA-5(1)"], pci-dss-4.0: ["8.3.6"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_password_policy_lowercase, iam_password_policy_uppercase, iam_password_policy_number, iam_password_policy_symbol]
#   remediation: {action: aws.iam.set_password_policy, risk: low, params: [setting]}
package warden.aws.iam.password_policy_characters

import data.warden.lib.display

# The password policy's attribute for each character class, and the class in messages.
# The attribute is each violation's key and its setting: the fix requires that class and
# changes nothing else.
classes := {
	"require_lowercase_characters": "a lowercase letter",
	"require_uppercase_characters": "an uppercase letter",
	"require_numbers": "a number",
	"require_symbols": "a symbol",
}

# An attribute absent from an existing policy is unknown: not judged.
deny contains violation if {
	input.resource.attributes.exists == true
	some attribute, class in classes
	input.resource.attributes[attribute] == false
	violation := {
		"msg": sprintf("the password policy of account %s does not require %s", [display.account, class]),
		"key": attribute,
		"setting": attribute,
	}
}

# Without a password policy, AWS requires no character class at all.
deny contains violation if {
	input.resource.attributes.exists == false
	some attribute, class in classes
	violation := {
		"msg": sprintf("account %s has no IAM password policy, so passwords need not contain %s", [display.account, class]),
		"key": attribute,
		"setting": attribute,
	}
}
