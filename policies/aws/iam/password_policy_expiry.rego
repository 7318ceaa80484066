# METADATA
# title: Password policy does not expire passwords within 90 days
# description: A password that never expires stays useful to whoever phished, guessed or found it for as long as its user keeps it; a maximum age bounds that. CIS AWS 3.0 no longer asks for expiry (NIST SP 800-63B prefers screening and MFA to periodic changes), so this policy is tagged with no CIS control; set password_max_age_days to the age your standard asks for. The fix sets the maximum age to that many days and changes nothing else.
# custom:
#   id: WARDEN-AWS-IAM-028
#   severity: low
#   resource_types: [aws.iam.password_policy]
#   prowler: [iam_password_policy_expires_passwords_within_90_days_or_less]
#   remediation: {action: aws.iam.set_password_policy, risk: low, params: [setting, max_password_age]}
package warden.aws.iam.password_policy_expiry

import data.warden.lib.display

# Settings are rules without arguments: computed once per evaluation, when needed.
max_age := n if {
	n := data.warden.config.password_max_age_days
} else := 90

# max_password_age 0 means passwords never expire. An attribute absent from an existing
# policy is unknown: not judged.
deny contains violation if {
	input.resource.attributes.exists == true
	input.resource.attributes.max_password_age == 0
	violation := {
		"msg": sprintf("the password policy of account %s lets passwords live forever (maximum %d days)", [display.account, max_age]),
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": max_age,
	}
}

deny contains violation if {
	input.resource.attributes.exists == true
	age := input.resource.attributes.max_password_age
	is_number(age)
	age > max_age
	violation := {
		"msg": sprintf("the password policy of account %s lets passwords live %d days (maximum %d)", [display.account, age, max_age]),
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": max_age,
	}
}

# Without a password policy, passwords never expire.
deny contains violation if {
	input.resource.attributes.exists == false
	violation := {
		"msg": sprintf("account %s has no IAM password policy, so passwords never expire (maximum %d days)", [display.account, max_age]),
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": max_age,
	}
}
