package warden.aws.iam.user_initial_access_key_test

import data.warden.aws.iam.user_initial_access_key

user(overrides) := {"resource": {
	"uid": "arn:aws:iam::222222222222:user/tomas.berg",
	"type": "aws.iam.user",
	"name": "tomas.berg",
	"account": "222222222222",
	"region": "global",
	"attributes": object.union(
		{
			"created": "2026-11-03T09:12:00Z",
			"password_enabled": true,
			"mfa_active": true,
			"access_keys": [{"id": "AKIAQ7TBERGN3W5XKD2M", "status": "Active", "created": "2026-11-03T09:13:05Z", "last_used": null}],
		},
		overrides,
	),
}}

key(overrides) := object.union({"id": "AKIAQ7TBERGN3W5XKD2M", "status": "Active", "created": "2026-11-03T09:13:05Z"}, overrides)

test_key_created_with_the_user_and_never_used if {
	user_initial_access_key.deny == {{
		"msg": "user tomas.berg can sign in to the console and has active access key AKIAQ7TBERGN3W5XKD2M, created with the user on 2026-11-03 and never used",
		"key": "AKIAQ7TBERGN3W5XKD2M",
	}} with input as user({})
}

test_last_used_absent_is_never_used if {
	count(user_initial_access_key.deny) == 1 with input as user({"access_keys": [key({})]})
	count(user_initial_access_key.deny) == 1 with input as user({"access_keys": [key({"last_used": ""})]})
}

test_key_created_at_the_window_edge if {
	count(user_initial_access_key.deny) == 1 with input as user({"access_keys": [key({"created": "2026-11-03T09:22:00Z"})]})
}

test_key_created_later_is_a_near_miss if {
	count(user_initial_access_key.deny) == 0 with input as user({"access_keys": [key({"created": "2026-11-03T09:22:01Z"})]})
	count(user_initial_access_key.deny) == 0 with input as user({"access_keys": [key({"created": "2026-11-20T14:00:00Z"})]})
}

test_used_key_is_a_near_miss if {
	count(user_initial_access_key.deny) == 0 with input as user({"access_keys": [key({"last_used": "2026-11-03T09:30:00Z"})]})
}

test_inactive_key_is_a_near_miss if {
	count(user_initial_access_key.deny) == 0 with input as user({"access_keys": [key({"status": "Inactive"})]})
}

# CIS 1.11 is about users with a console password; without the credential report it is unknown.
test_user_without_console_password_is_a_near_miss if {
	count(user_initial_access_key.deny) == 0 with input as user({"password_enabled": false})
	count(user_initial_access_key.deny) == 0 with input as json.remove(user({}), ["resource/attributes/password_enabled"])
}

test_user_without_creation_time_is_not_judged if {
	count(user_initial_access_key.deny) == 0 with input as json.remove(user({}), ["resource/attributes/created"])
}

test_one_violation_per_key if {
	keys := {v.key | some v in user_initial_access_key.deny} with input as user({"access_keys": [
		key({}),
		key({"id": "AKIAQ7TBERGN3W5XKD3N", "created": "2026-11-03T09:12:40Z"}),
		key({"id": "AKIAQ7TBERGN3W5XKD4P", "created": "2026-11-25T10:00:00Z"}),
	]})
	keys == {"AKIAQ7TBERGN3W5XKD2M", "AKIAQ7TBERGN3W5XKD3N"}
}

test_window_from_config if {
	count(user_initial_access_key.deny) == 0 with input as user({})
		with data.warden.config.initial_access_key_minutes as 1
	count(user_initial_access_key.deny) == 1 with input as user({"access_keys": [key({"created": "2026-11-03T10:00:00Z"})]})
		with data.warden.config.initial_access_key_minutes as 60
}

# --- messages never decide a violation -------------------------------------------

test_user_and_key_without_names_still_violate if {
	user_initial_access_key.deny == {{
		"msg": "user arn:aws:iam::222222222222:user/tomas.berg can sign in to the console and has active access key #0, created with the user on 2026-11-03 and never used",
		"key": "#0",
	}} with input as json.remove(user({}), ["resource/name", "resource/attributes/access_keys/0/id"])
}
