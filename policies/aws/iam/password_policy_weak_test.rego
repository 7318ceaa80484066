package warden.aws.iam.password_policy_weak_test

import data.warden.aws.iam.password_policy_weak

policy(attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:account-password-policy",
	"type": "aws.iam.password_policy",
	"name": "account-password-policy",
	"account": "111111111111",
	"region": "global",
	"attributes": attrs,
}}

cis := {
	"exists": true,
	"minimum_password_length": 14,
	"password_reuse_prevention": 24,
	"require_symbols": true,
	"require_numbers": true,
	"require_uppercase_characters": true,
	"require_lowercase_characters": true,
	"allow_users_to_change_password": true,
	"max_password_age": 0,
}

keys(attrs) := {v.key | some v in password_policy_weak.deny with input as policy(attrs)}

test_absent_policy_is_one_violation if {
	password_policy_weak.deny == {{"msg": "account 111111111111 has no IAM password policy", "key": "absent"}} with input as policy({"exists": false})
}

test_weak_policy_one_violation_per_weakness if {
	keys(object.union(cis, {"minimum_password_length": 8, "password_reuse_prevention": 0})) == {"minimum_password_length", "password_reuse_prevention"}
}

test_short_passwords if {
	password_policy_weak.deny == {{
		"msg": "the password policy of account 111111111111 allows passwords of 13 characters (minimum 14)",
		"key": "minimum_password_length",
	}} with input as policy(object.union(cis, {"minimum_password_length": 13}))
}

test_reuse_23_is_too_few if {
	keys(object.union(cis, {"password_reuse_prevention": 23})) == {"password_reuse_prevention"}
}

test_cis_policy_is_a_near_miss if {
	count(password_policy_weak.deny) == 0 with input as policy(cis)
}

test_thresholds_from_config if {
	count(password_policy_weak.deny) == 0 with input as policy(object.union(cis, {"minimum_password_length": 12, "password_reuse_prevention": 4}))
		with data.warden.config as {"password_min_length": 12, "password_reuse_prevention": 4}
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_account_still_violates if {
	password_policy_weak.deny == {{"msg": "account arn:aws:iam::111111111111:account-password-policy has no IAM password policy", "key": "absent"}} with input as json.remove(policy({"exists": false}), ["resource/account"])
	count(password_policy_weak.deny) == 1 with input as json.remove(policy(object.union(cis, {"minimum_password_length": 8})), ["resource/account"])
}
