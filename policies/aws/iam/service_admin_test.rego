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
	keys(policy({"Statement": {"Effect": "Allow", "Action": "organizations:*", "Resource": "*"}})) == {"organizations"}
}

test_kms_is_left_to_iam_038 if {
	keys(policy({"Statement": {"Effect": "Allow", "Action": "kms:*", "Resource": "*"}})) == set()
}

test_upper_case_and_list_violate if {
	keys(policy({"Statement": [{"Effect": "Allow", "Action": ["IAM:*", "sts:*"], "Resource": ["*"]}]})) == {"iam", "sts"}
}

test_not_action_of_other_services_violates if {
	doc := {"Statement": [{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}]}
	keys(policy(doc)) == {"sts"}
}

test_named_deny_leaves_service_broad if {
	doc := {"Statement": [
		{"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
		{"Effect": "Deny", "Action": ["iam:DeleteUser", "iam:DeleteRole"], "Resource": "*"},
	]}
	keys(policy(doc)) == {"iam"}
}

test_inline_violation if {
	r := {
		"uid": "arn:aws:iam::333333333333:role/kms-custodian",
		"type": "aws.iam.role",
		"name": "kms-custodian",
		"attributes": {"inline_policies": [{"name": "sts-all", "document": {"Statement": [{"Effect": "Allow", "Action": "sts:*", "Resource": "*"}]}}]},
	}
	[v] := [v | some v in service_admin.deny] with input as {"resource": r}
	v.key == "sts-all/sts"
	not v.action # detach_policy deletes one inline policy, given its name
	v.msg == "inline policy sts-all of role kms-custodian allows every sts action (sts:*) on every resource"
}

test_read_only_service_actions_pass if {
	doc := {"Statement": [{"Effect": "Allow", "Action": ["iam:Get*", "iam:List*", "kms:Describe*", "sts:GetCallerIdentity"], "Resource": "*"}]}
	keys(policy(doc)) == set()
}

test_scoped_role_passes if {
	doc := {"Statement": [{"Effect": "Allow", "Action": "iam:*", "Resource": "arn:aws:iam::333333333333:role/app-*"}]}
	keys(policy(doc)) == set()
}

test_service_deny_overrides if {
	doc := {"Statement": [
		{"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
		{"Effect": "Deny", "Action": "iam:*", "Resource": "*"},
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
	given := {"resource": policy({"Statement": {"Effect": "Allow", "Action": "iam:*", "Resource": "*"}})}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in service_admin.deny with input as given}
	count(want) > 0
	{v.msg | some v in service_admin.deny with input as json.remove(given, ["resource/name"])} == want
}
