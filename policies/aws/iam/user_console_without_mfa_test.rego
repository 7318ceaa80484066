package warden.aws.iam.user_console_without_mfa_test

import data.warden.aws.iam.user_console_without_mfa

user(password_enabled, mfa_active) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/erin.okafor",
	"type": "aws.iam.user",
	"name": "erin.okafor",
	"account": "111111111111",
	"region": "global",
	"attributes": {"password_enabled": password_enabled, "mfa_active": mfa_active, "access_keys": []},
}}

test_password_without_mfa if {
	user_console_without_mfa.deny == {{"msg": "user erin.okafor can sign in to the console with a password but has no MFA device"}} with input as user(true, false)
}

test_password_with_mfa if {
	count(user_console_without_mfa.deny) == 0 with input as user(true, true)
}

test_no_password_no_mfa_is_a_near_miss if {
	count(user_console_without_mfa.deny) == 0 with input as user(false, false)
}

# --- messages never decide a violation -------------------------------------------

test_user_without_name_still_violates if {
	user_console_without_mfa.deny == {{"msg": "user arn:aws:iam::111111111111:user/erin.okafor can sign in to the console with a password but has no MFA device"}} with input as json.remove(user(true, false), ["resource/name"])
}
