# METADATA
# title: Password policy is weaker than CIS
# description: Without an account password policy requiring long passwords that cannot be reused, IAM users' console passwords are easy to guess or recycle.
# custom:
#   id: WARDEN-AWS-IAM-013
#   severity: medium
#   resource_types: [aws.iam.password_policy]
#   frameworks: {cis-aws-3.0: ["1.8", "1.9"], nist-800-53-r5: ["IA-5(1)"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_password_policy_minimum_length_14, iam_password_policy_reuse_24]
#   remediation: {action: aws.iam.set_password_policy, risk: low}
package warden.aws.iam.password_policy_weak

import data.warden.lib.display

# Settings are rules without arguments: computed once per evaluation, when needed.
min_length := n if {
	n := data.warden.config.password_min_length
} else := 14

min_reuse := n if {
	n := data.warden.config.password_reuse_prevention
} else := 24

deny contains violation if {
	input.resource.attributes.exists == false
	violation := {
		"msg": sprintf("account %s has no IAM password policy", [display.account]),
		"key": "absent",
	}
}

deny contains violation if {
	input.resource.attributes.exists == true
	length := object.get(input.resource.attributes, "minimum_password_length", 0)
	length < min_length
	violation := {
		"msg": sprintf("the password policy of account %s allows passwords of %d characters (minimum %d)", [display.account, length, min_length]),
		"key": "minimum_password_length",
	}
}

deny contains violation if {
	input.resource.attributes.exists == true
	reuse := object.get(input.resource.attributes, "password_reuse_prevention", 0)
	reuse < min_reuse
	violation := {
		"msg": sprintf("the password policy of account %s remembers %d previous passwords (minimum %d)", [display.account, reuse, min_reuse]),
		"key": "password_reuse_prevention",
	}
}
