package warden.aws.iam.password_policy_characters_test

import data.warden.aws.iam.password_policy_characters

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

keys(attrs) := {v.key | some v in password_policy_characters.deny with input as policy(attrs)}

test_no_symbols if {
	password_policy_characters.deny == {{
		"msg": "the password policy of account 111111111111 does not require a symbol",
		"key": "require_symbols",
		"setting": "require_symbols",
	}} with input as policy(object.union(strict, {"require_symbols": false}))
}

test_one_violation_per_missing_class if {
	keys(object.union(strict, {"require_numbers": false, "require_lowercase_characters": false})) == {"require_numbers", "require_lowercase_characters"}
	keys(object.union(strict, {"require_uppercase_characters": false})) == {"require_uppercase_characters"}
	keys(object.union(strict, {
		"require_symbols": false, "require_numbers": false,
		"require_uppercase_characters": false, "require_lowercase_characters": false,
	})) == {"require_symbols", "require_numbers", "require_uppercase_characters", "require_lowercase_characters"}
}

test_every_class_required_is_a_near_miss if {
	count(password_policy_characters.deny) == 0 with input as policy(strict)
}

test_absent_policy_requires_no_class if {
	keys({"exists": false}) == {"require_symbols", "require_numbers", "require_uppercase_characters", "require_lowercase_characters"}
	{"msg": "account 111111111111 has no IAM password policy, so passwords need not contain a number", "key": "require_numbers", "setting": "require_numbers"} in password_policy_characters.deny with input as policy({"exists": false})
}

# An existing policy whose rule was not read is unknown, not weak.
test_unknown_rule_is_not_judged if {
	keys(json.remove(strict, ["require_symbols"])) == set()
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_account_still_violates if {
	password_policy_characters.deny == {{
		"msg": "the password policy of account arn:aws:iam::111111111111:account-password-policy does not require a number",
		"key": "require_numbers",
		"setting": "require_numbers",
	}} with input as json.remove(policy(object.union(strict, {"require_numbers": false})), ["resource/account"])
}
