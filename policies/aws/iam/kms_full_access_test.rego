package warden.aws.iam.kms_full_access_test

import data.warden.aws.iam.kms_full_access

policy(statements) := {
	"uid": "arn:aws:iam::333333333333:policy/kms-admin",
	"type": "aws.iam.policy",
	"name": "kms-admin",
	"account": "333333333333",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Statement": statements},
		"attached_to": {"users": [], "groups": ["key-admins"], "roles": []},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in kms_full_access.deny} with input as {"resource": resource}
}

test_kms_wildcard_violates if {
	[v] := [v | some v in kms_full_access.deny] with input as {"resource": policy([{"Effect": "Allow", "Action": "KMS:*", "Resource": "*"}])}
	v.key == "kms"
	v.msg == "policy kms-admin (attached to group key-admins) allows every kms action (kms:*) on every resource, which lets its holder decrypt with, give away or delete every key"
}

test_every_key_of_the_service_violates if {
	keys(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "arn:aws:kms:*:333333333333:*"}])) == {"kms"}
}

test_not_action_violates if {
	keys(policy([{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}])) == {"kms"}
}

test_inline_violates_with_its_name if {
	r := {
		"uid": "arn:aws:iam::333333333333:role/kms-custodian",
		"type": "aws.iam.role",
		"name": "kms-custodian",
		"attributes": {"inline_policies": [{"name": "kms-all", "document": {"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}}]},
	}
	[v] := [v | some v in kms_full_access.deny] with input as {"resource": r}
	v.key == "kms-all/kms"
	v.inline_policy == "kms-all"
	v.msg == "inline policy kms-all of role kms-custodian allows every kms action (kms:*) on every resource, which lets its holder decrypt with, give away or delete every key"
}

test_named_deny_leaves_it_broad_but_full_deny_passes if {
	allow := {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}
	keys(policy([allow, {"Effect": "Deny", "Action": ["kms:ScheduleKeyDeletion", "kms:DisableKey"], "Resource": "*"}])) == {"kms"}
	keys(policy([allow, {"Effect": "Deny", "Action": "kms:*", "Resource": "*"}])) == set()
}

test_read_and_use_actions_pass if {
	keys(policy([{"Effect": "Allow", "Action": ["kms:Describe*", "kms:List*", "kms:Decrypt", "kms:Encrypt"], "Resource": "*"}])) == set()
}

# One key, or the keys whose ids start alike, are some keys (a key's wildcard, key/*, is
# not asked: kms:* acts on aliases and custom key stores too).
test_scoped_keys_pass if {
	keys(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "arn:aws:kms:eu-west-1:333333333333:key/0c7f6f0e-5a1b-4a8e-9d7c-2b3f4a5e6d7c"}])) == set()
	keys(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "arn:aws:kms:eu-west-1:333333333333:key/*"}])) == set()
}

test_full_admin_is_left_to_iam_001 if {
	keys(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}])) == set()
}

test_unattached_policy_passes if {
	r := json.patch(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]), [{"op": "replace", "path": "/attributes/attachment_count", "value": 0}])
	keys(r) == set()
}

test_resource_without_name_still_violates if {
	given := {"resource": policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}])}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in kms_full_access.deny with input as given}
	count(want) > 0
	{v.msg | some v in kms_full_access.deny with input as json.remove(given, ["resource/name"])} == want
}
