package warden.aws.iam.user_two_active_keys_test

import data.warden.aws.iam.user_two_active_keys

user(keys) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/ci-deploy-prod",
	"type": "aws.iam.user",
	"name": "ci-deploy-prod",
	"account": "111111111111",
	"region": "global",
	"attributes": {"password_enabled": false, "mfa_active": false, "access_keys": keys},
}}

old := {"id": "AKIA5XQ2JH7RMZ3KQ8TA", "status": "Active", "created": "2026-05-14T09:30:00Z"}

new := {"id": "AKIA5XQ2JH7RPC6VD2NF", "status": "Active", "created": "2026-11-20T16:05:00Z"}

test_two_active_keys if {
	user_two_active_keys.deny == {{"msg": "user ci-deploy-prod has 2 active access keys (AKIA5XQ2JH7RMZ3KQ8TA, AKIA5XQ2JH7RPC6VD2NF)"}} with input as user([new, old])
}

test_one_active_one_inactive_is_a_near_miss if {
	count(user_two_active_keys.deny) == 0 with input as user([object.union(old, {"status": "Inactive"}), new])
}

test_single_key if {
	count(user_two_active_keys.deny) == 0 with input as user([old])
}

test_no_keys if {
	count(user_two_active_keys.deny) == 0 with input as user([])
	count(user_two_active_keys.deny) == 0 with input as {"resource": {"type": "aws.iam.user", "name": "x", "attributes": {}}}
}

# --- messages never decide a violation -------------------------------------------

test_keys_without_ids_still_count if {
	keys := [object.remove(old, ["id"]), object.remove(new, ["id"])]
	user_two_active_keys.deny == {{"msg": "user arn:aws:iam::111111111111:user/ci-deploy-prod has 2 active access keys (#0, #1)"}} with input as json.remove(user(keys), ["resource/name"])
}
