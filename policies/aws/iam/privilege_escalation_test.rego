package warden.aws.iam.privilege_escalation_test

import data.warden.aws.iam.privilege_escalation

policy(statements) := {
	"uid": "arn:aws:iam::111111111111:policy/ci-deploy",
	"type": "aws.iam.policy",
	"name": "ci-deploy",
	"account": "111111111111",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Version": "2012-10-17", "Statement": statements},
		"attached_to": {"users": [], "groups": [], "roles": ["ci"]},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in privilege_escalation.deny} with input as {"resource": resource}
}

test_create_policy_version_violates if {
	keys(policy([{"Effect": "Allow", "Action": "iam:CreatePolicyVersion", "Resource": "*"}])) == {"iam:CreatePolicyVersion"}
}

test_lower_case_wildcard_violates_once_per_action if {
	keys(policy([{"Effect": "Allow", "Action": "iam:*policyversion", "Resource": "*"}])) == {
		"iam:CreatePolicyVersion",
		"iam:SetDefaultPolicyVersion",
	}
}

test_question_mark_and_list if {
	keys(policy([{"Effect": "Allow", "Action": ["s3:GetObject", "iam:Attach?serPolicy"], "Resource": ["*"]}])) == {"iam:AttachUserPolicy"}
}

test_scoped_to_own_user_passes if {
	doc := [{
		"Effect": "Allow",
		"Action": ["iam:CreateAccessKey", "iam:UpdateLoginProfile"],
		"Resource": "arn:aws:iam::111111111111:user/${aws:username}",
	}]
	keys(policy(doc)) == set()
}

test_all_users_of_the_account_violates if {
	doc := [{"Effect": "Allow", "Action": "iam:CreateAccessKey", "Resource": "arn:aws:iam::111111111111:user/*"}]
	keys(policy(doc)) == {"iam:CreateAccessKey"}
}

test_conditional_allow_passes if {
	doc := [{
		"Effect": "Allow",
		"Action": "iam:AttachUserPolicy",
		"Resource": "*",
		"Condition": {"ArnEquals": {"iam:PolicyARN": "arn:aws:iam::111111111111:policy/quarantine-deny-all"}},
	}]
	keys(policy(doc)) == set()
}

test_deny_overrides if {
	doc := [
		{"Effect": "Allow", "Action": ["iam:Put*", "iam:Get*"], "Resource": "*"},
		{"Effect": "Deny", "Action": "iam:Put*Policy", "Resource": "*"},
	]
	keys(policy(doc)) == set()
}

test_conditional_deny_does_not_override if {
	doc := [
		{"Effect": "Allow", "Action": "iam:PutRolePolicy", "Resource": "*"},
		{"Effect": "Deny", "Action": "iam:*", "Resource": "*", "Condition": {"BoolIfExists": {"aws:MultiFactorAuthPresent": "false"}}},
	]
	keys(policy(doc)) == {"iam:PutRolePolicy"}
}

test_pass_role_with_compute_violates if {
	doc := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
		{"Effect": "Allow", "Action": ["lambda:CreateFunction", "lambda:UpdateFunctionCode"], "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:orders-*"},
	]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.key == "iam:PassRole"
	v.compute_actions == ["lambda:CreateFunction"]
}

test_pass_role_without_compute_passes if {
	doc := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
		{"Effect": "Allow", "Action": "s3:PutObject", "Resource": "*"},
	]
	keys(policy(doc)) == set()
}

test_pass_role_scoped_or_conditional_passes if {
	scoped := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111111111111:role/ecs-task-*"},
		{"Effect": "Allow", "Action": "ecs:RegisterTaskDefinition", "Resource": "*"},
	]
	keys(policy(scoped)) == set()
	conditional := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*", "Condition": {"StringEquals": {"iam:PassedToService": "ecs-tasks.amazonaws.com"}}},
		{"Effect": "Allow", "Action": "ecs:RegisterTaskDefinition", "Resource": "*"},
	]
	keys(policy(conditional)) == set()
}

test_inline_key_and_no_delete_action if {
	r := {
		"uid": "arn:aws:iam::111111111111:role/etl",
		"type": "aws.iam.role",
		"name": "etl",
		"attributes": {"inline_policies": [{"name": "glue-jobs", "document": {"Statement": [
			{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111111111111:role/*"},
			{"Effect": "Allow", "Action": "glue:*", "Resource": "*"},
		]}}]},
	}
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": r}
	v.key == "glue-jobs/iam:PassRole"
	v.inline_policy == "glue-jobs"
	not v.action
	v.compute_actions == ["glue:CreateDevEndpoint", "glue:UpdateDevEndpoint"]
}

test_iam_wildcard_is_left_to_iam_002 if {
	keys(policy([{"Effect": "Allow", "Action": ["iam:*", "ec2:*"], "Resource": "*"}])) == set()
}

test_lower_case_action_lists_follow_the_named_ones if {
	privilege_escalation.escalation_names == {lower(a): a | some a in privilege_escalation.escalation_actions}
	privilege_escalation.compute_names == [[a, lower(a)] | some a in privilege_escalation.compute_actions]
	{a | some a in privilege_escalation.iam_actions.iam} == {lower(a) | some a in privilege_escalation.escalation_actions} | {"iam:#", "iam:passrole"}
	{a | some actions in privilege_escalation.compute_by_service; some a in actions} == {lower(a) | some a in privilege_escalation.compute_actions}
	every svc, actions in object.union(privilege_escalation.compute_by_service, privilege_escalation.iam_actions) {
		every a in actions {
			split(a, ":")[0] == svc
		}
	}
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := {"resource": policy([{"Effect": "Allow", "Action": "iam:CreatePolicyVersion", "Resource": "*"}])}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in privilege_escalation.deny with input as given}
	count(want) > 0
	{v.msg | some v in privilege_escalation.deny with input as json.remove(given, ["resource/name"])} == want
}
