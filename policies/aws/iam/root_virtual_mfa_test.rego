package warden.aws.iam.root_virtual_mfa_test

import data.warden.aws.iam.root_virtual_mfa

root(attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:root",
	"type": "aws.iam.root_user",
	"name": "root",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union({"mfa_active": true, "access_keys_active": 0}, attrs),
}}

test_root_with_virtual_mfa if {
	root_virtual_mfa.deny == {{"msg": "the root user of account 111111111111 uses a virtual MFA device instead of a hardware one"}} with input as root({"virtual_mfa": true})
}

test_root_with_hardware_mfa_is_a_near_miss if {
	count(root_virtual_mfa.deny) == 0 with input as root({"virtual_mfa": false})
}

# Absent: MFA is off (another policy's finding) or the virtual devices were not listed.
test_unknown_device_is_not_judged if {
	count(root_virtual_mfa.deny) == 0 with input as root({})
	count(root_virtual_mfa.deny) == 0 with input as root({"mfa_active": false})
}

# --- messages never decide a violation -------------------------------------------

test_root_without_account_still_violates if {
	root_virtual_mfa.deny == {{"msg": "the root user of account arn:aws:iam::111111111111:root uses a virtual MFA device instead of a hardware one"}} with input as json.remove(root({"virtual_mfa": true}), ["resource/account", "resource/name"])
}
