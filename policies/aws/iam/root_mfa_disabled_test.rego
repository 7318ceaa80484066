package warden.aws.iam.root_mfa_disabled_test

import data.warden.aws.iam.root_mfa_disabled

root(mfa_active) := {"resource": {
	"uid": "arn:aws:iam::222222222222:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "222222222222",
	"region": "global",
	"attributes": {"mfa_active": mfa_active, "access_keys_active": 0, "password_last_used": "2025-08-03T07:41:00Z"},
}}

test_root_without_mfa if {
	root_mfa_disabled.deny == {{"msg": "the root user of account 222222222222 has no MFA device"}} with input as root(false)
}

test_root_with_mfa if {
	count(root_mfa_disabled.deny) == 0 with input as root(true)
}

# --- messages never decide a violation -------------------------------------------

test_root_without_account_still_violates if {
	root_mfa_disabled.deny == {{"msg": "the root user of account arn:aws:iam::222222222222:root has no MFA device"}} with input as json.remove(root(false), ["resource/account", "resource/name"])
}
