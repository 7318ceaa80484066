package warden.aws.iam.root_access_keys_test

import data.warden.aws.iam.root_access_keys

root(keys) := {"resource": {
	"uid": "arn:aws:iam::111111111111:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "111111111111",
	"region": "global",
	"attributes": {"mfa_active": true, "access_keys_active": keys, "password_last_used": "2026-02-14T10:22:00Z"},
}}

test_root_with_a_key if {
	root_access_keys.deny == {{"msg": "the root user of account 111111111111 has 1 active access key(s)"}} with input as root(1)
}

test_root_with_two_keys if {
	count(root_access_keys.deny) == 1 with input as root(2)
}

test_root_without_keys if {
	count(root_access_keys.deny) == 0 with input as root(0)
}

# --- messages never decide a violation -------------------------------------------

test_root_without_account_still_violates if {
	root_access_keys.deny == {{"msg": "the root user of account arn:aws:iam::111111111111:root has 1 active access key(s)"}} with input as json.remove(root(1), ["resource/account", "resource/name"])
}
