package warden.aws.iam.service_admin_test

import data.warden.aws.iam.service_admin

policy(document) := {
	"uid": "arn:aws:iam::333333333333:policy/kms-admin",
	"type": "aws.iam.policy",
	"name": "kms-admin",
	"account": "333333333333",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": document,
		"attached_to": {"users": [], "groups": ["identity-admins"], "roles": []},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in service_admin.deny} with input as {"resource": resource}
}

test_service_wildcard_violates if {
	keys(policy({"Statement": {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}})) == {"kms"}
}

test_upper_case_and_list_violate if {
	keys(policy({"Statement": [{"Effect": "Allow", "Action": ["IAM:*", "sts:*"], "Resource": ["*"]}]})) == {"iam", "sts"}
}

test_not_action_of_other_services_violates if {
	doc := {"Statement": [{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}]}
	keys(policy(doc)) == {"sts", "kms"}
}

test_named_deny_leaves_service_broad if {
	doc := {"Statement": [
		{"Effect": "Allow", "Action": "kms:*", "Resource": "*"},
		{"Effect": "Deny", "Action": ["kms:ScheduleKeyDeletion", "kms:DisableKey"], "Resource": "*"},
	]}
	keys(policy(doc)) == {"kms"}
}

test_inline_violation if {
	r := {
		"uid": "arn:aws:iam::333333333333:role/kms-custodian",
		"type": "aws.iam.role",
		"name": "kms-custodian",
		"attributes": {"inline_policies": [{"name": "kms-all", "document": {"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}]}}]},
	}
	[v] := [v | some v in service_admin.deny] with input as {"resource": r}
	v.key == "kms-all/kms"
	not v.action # detach_policy deletes one inline policy, given its name
	v.msg == "inline policy kms-all of role kms-custodian allows every kms action (kms:*) on every resource"
}

test_read_only_service_actions_pass if {
	doc := {"Statement": [{"Effect": "Allow", "Action": ["iam:Get*", "iam:List*", "kms:Describe*", "sts:GetCallerIdentity"], "Resource": "*"}]}
	keys(policy(doc)) == set()
}

test_scoped_key_passes if {
	doc := {"Statement": [{"Effect": "Allow", "Action": "kms:*", "Resource": "arn:aws:kms:eu-west-1:333333333333:key/0c7f6f0e-5a1b-4a8e-9d7c-2b3f4a5e6d7c"}]}
	keys(policy(doc)) == set()
}

test_service_deny_overrides if {
	doc := {"Statement": [
		{"Effect": "Allow", "Action": "kms:*", "Resource": "*"},
		{"Effect": "Deny", "Action": "kms:*", "Resource": "*"},
	]}
	keys(policy(doc)) == set()
}

test_conditional_allow_passes if {
	doc := {"Statement": [{"Effect": "Allow", "Action": "sts:*", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-acme1234"}}}]}
	keys(policy(doc)) == set()
}

test_full_admin_is_left_to_iam_001 if {
	keys(policy({"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})) == set()
}

test_generic_actions_follow_the_services if {
	service_admin.generic_actions == {svc: [concat(":", [svc, "#"])] | some svc in service_admin.services}
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := {"resource": policy({"Statement": {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}})}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in service_admin.deny with input as given}
	count(want) > 0
	{v.msg | some v in service_admin.deny with input as json.remove(given, ["resource/name"])} == want
}
