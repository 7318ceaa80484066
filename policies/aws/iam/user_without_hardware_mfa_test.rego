package warden.aws.iam.user_without_hardware_mfa_test

import data.warden.aws.iam.user_without_hardware_mfa

user(overrides) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/bob.martins",
	"type": "aws.iam.user",
	"name": "bob.martins",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{"password_enabled": true, "mfa_active": true, "mfa_devices": [virtual]},
		overrides,
	),
}}

virtual := {"serial": "arn:aws:iam::111111111111:mfa/bob.martins", "type": "virtual", "enabled": "2023-04-17T10:20:00Z"}

hardware := {"serial": "arn:aws:iam::111111111111:u2f/user/bob.martins/yubikey-5c-AB12CD34", "type": "hardware", "enabled": "2026-01-12T09:00:00Z"}

test_virtual_device_only if {
	user_without_hardware_mfa.deny == {{"msg": "user bob.martins signs in to the console with a virtual MFA device (arn:aws:iam::111111111111:mfa/bob.martins) and has no hardware one"}} with input as user({})
}

test_virtual_device_beside_a_hardware_one if {
	user_without_hardware_mfa.deny == {{"msg": "user bob.martins has a hardware MFA device but can still sign in to the console with a virtual one (arn:aws:iam::111111111111:mfa/bob.martins)"}} with input as user({"mfa_devices": [hardware, virtual]})
}

test_no_device_at_all if {
	user_without_hardware_mfa.deny == {{"msg": "user bob.martins can sign in to the console with a password and has no MFA device, hardware or virtual"}} with input as user({"mfa_active": false, "mfa_devices": []})
}

test_hardware_devices_only_is_a_near_miss if {
	count(user_without_hardware_mfa.deny) == 0 with input as user({"mfa_devices": [hardware]})
	count(user_without_hardware_mfa.deny) == 0 with input as user({"mfa_devices": [hardware, object.union(hardware, {"serial": "GAHT12345678"})]})
}

test_user_without_console_password_is_a_near_miss if {
	count(user_without_hardware_mfa.deny) == 0 with input as user({"password_enabled": false})
	count(user_without_hardware_mfa.deny) == 0 with input as user({"password_enabled": false, "mfa_devices": []})
}

# Absent: the devices or the credential report could not be read.
test_unknown_devices_are_not_judged if {
	count(user_without_hardware_mfa.deny) == 0 with input as json.remove(user({}), ["resource/attributes/mfa_devices"])
	count(user_without_hardware_mfa.deny) == 0 with input as json.remove(user({}), ["resource/attributes/password_enabled"])
}

# --- messages never decide a violation -------------------------------------------

test_user_and_device_without_names_still_violate if {
	user_without_hardware_mfa.deny == {{"msg": "user arn:aws:iam::111111111111:user/bob.martins signs in to the console with a virtual MFA device (#0) and has no hardware one"}} with input as json.remove(user({}), ["resource/name", "resource/attributes/mfa_devices/0/serial"])
}

# A user without a console password who calls AWS with active access keys and has no MFA
# device at all is not this policy's (issue 32, class 7): no MFA device guards a request
# signed with an access key unless a policy asks aws:MultiFactorAuthPresent, and the keys
# are judged by their own policies (WARDEN-AWS-IAM-007, -008, -009, -026).
test_api_only_user_without_any_mfa_is_a_near_miss if {
	keys := [{"id": "AKIAEXAMPLEAPIONLY01", "status": "Active", "created": "2019-01-01T00:00:00Z", "last_used": "2026-11-29T00:00:00Z"}]
	count(user_without_hardware_mfa.deny) == 0 with input as user({"password_enabled": false, "mfa_active": false, "mfa_devices": [], "access_keys": keys})
}
