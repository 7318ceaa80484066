package warden.aws.iam.password_policy_expiry_test

import data.warden.aws.iam.password_policy_expiry

policy(attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:account-password-policy",
	"type": "aws.iam.password_policy",
	"name": "account-password-policy",
	"account": "111111111111",
	"region": "global",
	"attributes": attrs,
}}

strict := {
	"exists": true,
	"minimum_password_length": 14,
	"password_reuse_prevention": 24,
	"require_symbols": true,
	"require_numbers": true,
	"require_uppercase_characters": true,
	"require_lowercase_characters": true,
	"allow_users_to_change_password": true,
	"max_password_age": 90,
}

test_passwords_never_expire if {
	password_policy_expiry.deny == {{
		"msg": "the password policy of account 111111111111 lets passwords live forever (maximum 90 days)",
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": 90,
	}} with input as policy(object.union(strict, {"max_password_age": 0}))
}

test_passwords_live_91_days if {
	password_policy_expiry.deny == {{
		"msg": "the password policy of account 111111111111 lets passwords live 91 days (maximum 90)",
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": 90,
	}} with input as policy(object.union(strict, {"max_password_age": 91}))
}

test_90_days_is_a_near_miss if {
	count(password_policy_expiry.deny) == 0 with input as policy(strict)
	count(password_policy_expiry.deny) == 0 with input as policy(object.union(strict, {"max_password_age": 1}))
}

test_absent_policy_never_expires_passwords if {
	password_policy_expiry.deny == {{
		"msg": "account 111111111111 has no IAM password policy, so passwords never expire (maximum 90 days)",
		"key": "max_password_age",
		"setting": "max_password_age",
		"max_password_age": 90,
	}} with input as policy({"exists": false})
}

test_unknown_age_is_not_judged if {
	count(password_policy_expiry.deny) == 0 with input as policy(json.remove(strict, ["max_password_age"]))
}

test_maximum_from_config if {
	count(password_policy_expiry.deny) == 1 with input as policy(strict)
		with data.warden.config.password_max_age_days as 60
	count(password_policy_expiry.deny) == 0 with input as policy(object.union(strict, {"max_password_age": 365}))
		with data.warden.config.password_max_age_days as 365
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_account_still_violates if {
	count(password_policy_expiry.deny) == 1 with input as json.remove(policy(object.union(strict, {"max_password_age": 0})), ["resource/account"])
	count(password_policy_expiry.deny) == 1 with input as json.remove(policy({"exists": false}), ["resource/account"])
}
