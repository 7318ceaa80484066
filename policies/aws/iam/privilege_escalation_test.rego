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

	# iam:Put* also holds iam:PutUserPermissionsBoundary, which the Deny leaves
	keys(policy(doc)) == {"iam:PutUserPermissionsBoundary"}
	keys(policy(array.concat(doc, [{"Effect": "Deny", "Action": "iam:PutUserPermissionsBoundary", "Resource": "arn:aws:iam::*:user/*"}]))) == set()
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
		{"Effect": "Allow", "Action": ["lambda:CreateFunction", "lambda:InvokeFunction", "lambda:GetFunction"], "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:orders-*"},
	]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.key == "iam:PassRole"
	v.compute_actions == ["lambda:CreateFunction", "lambda:InvokeFunction"]
	v.paths == [["iam:PassRole", "lambda:CreateFunction", "lambda:InvokeFunction"]]
	v.msg == "policy ci-deploy (attached to role ci) allows iam:PassRole with lambda:CreateFunction and lambda:InvokeFunction (iam:PassRole on every role), which lets its holder run code as any role"
}

test_pass_role_with_half_a_path_passes if {
	# creating a function it cannot invoke or trigger runs nothing
	doc := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
		{"Effect": "Allow", "Action": ["lambda:CreateFunction", "ecs:RegisterTaskDefinition", "datapipeline:CreatePipeline"], "Resource": "*"},
	]
	keys(policy(doc)) == set()
}

test_pass_role_paths_each_named if {
	doc := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111111111111:role/*"},
		{"Effect": "Allow", "Action": ["ec2:RunInstances", "codebuild:CreateProject", "codebuild:StartBuild"], "Resource": "arn:aws:ec2:eu-west-1:111111111111:*/*"},
	]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.paths == [["iam:PassRole", "ec2:RunInstances"], ["iam:PassRole", "codebuild:CreateProject", "codebuild:StartBuild"]]
	contains(v.msg, "allows iam:PassRole with ec2:RunInstances; iam:PassRole with codebuild:CreateProject and codebuild:StartBuild (iam:PassRole on every role)")
}

test_existing_compute_actions_violate_alone if {
	doc := [{"Effect": "Allow", "Action": ["lambda:UpdateFunctionCode", "ssm:SendCommand", "ssm:StartSession", "lambda:GetFunction"], "Resource": "*"}]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.key == "existing-resources"
	v.paths == [["lambda:UpdateFunctionCode"], ["ssm:StartSession"], ["ssm:SendCommand"]]
	v.msg == "policy ci-deploy (attached to role ci) allows lambda:UpdateFunctionCode; ssm:StartSession; ssm:SendCommand on every resource, which lets its holder run code as the roles of existing resources"
}

test_existing_compute_action_on_named_resources_passes if {
	doc := [
		{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:orders-api"},
		{"Effect": "Allow", "Action": "ssm:SendCommand", "Resource": "*", "Condition": {"StringEquals": {"aws:ResourceTag/team": "orders"}}},
	]
	keys(policy(doc)) == set()
}

# Every function of a region, every instance: all of a type is every resource (class 1 of
# issue 32); a prefix is not.
test_existing_compute_actions_on_every_resource_of_their_type_violate if {
	doc := [
		{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:*"},
		{"Effect": "Allow", "Action": ["ssm:SendCommand"], "Resource": ["arn:aws:ec2:*:*:instance/*", "arn:aws:ssm:*::document/AWS-RunShellScript"]},
	]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.key == "existing-resources"
	v.paths == [["lambda:UpdateFunctionCode"], ["ssm:SendCommand"]]

	# the message names what the patterns cover, not "every resource"
	v.msg == "policy ci-deploy (attached to role ci) allows lambda:UpdateFunctionCode; ssm:SendCommand on every resource matching arn:aws:ec2:*:*:instance/*, arn:aws:lambda:eu-west-1:111111111111:function:*, which lets its holder run code as the roles of existing resources"
}

# A type's wildcard beside "*": each pattern that covers a reported action is named.
test_message_names_type_wildcards_beside_every_resource if {
	doc := [
		{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:*"},
		{"Effect": "Allow", "Action": "ssm:SendCommand", "Resource": "*"},
	]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	contains(v.msg, "allows lambda:UpdateFunctionCode; ssm:SendCommand on every resource matching *, arn:aws:lambda:eu-west-1:111111111111:function:*, which")

	# the same action also on "*": every resource
	both := array.concat(doc, [{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "*"}])
	[w] := [w | some w in privilege_escalation.deny] with input as {"resource": policy(both)}
	contains(w.msg, "allows lambda:UpdateFunctionCode; ssm:SendCommand on every resource, which")
}

test_iam_path_message_names_the_type_wildcard if {
	doc := [{"Effect": "Allow", "Action": "iam:AttachUserPolicy", "Resource": "arn:aws:iam::111111111111:user/*"}]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.msg == "policy ci-deploy (attached to role ci) allows iam:AttachUserPolicy on every resource matching arn:aws:iam::111111111111:user/*, which lets its holder escalate its privileges"
}

test_existing_compute_actions_on_some_resources_of_their_type_pass if {
	doc := [
		{"Effect": "Allow", "Action": "lambda:UpdateFunctionCode", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:prod-*"},
		{"Effect": "Allow", "Action": "ssm:SendCommand", "Resource": ["arn:aws:ec2:*:*:instance/i-0123456789abcdef0", "arn:aws:ssm:*::document/*"]},
		{"Effect": "Allow", "Action": "ec2:StartInstances", "Resource": "arn:aws:ec2:*:*:launch-template/*"},
	]
	keys(policy(doc)) == set()
}

test_iam_paths_on_every_resource_of_their_type_violate if {
	doc := [
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "arn:aws:iam::111111111111:role/*"},
		{"Effect": "Allow", "Action": "lambda:CreateFunction", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:tmp-*"},
		{"Effect": "Allow", "Action": "lambda:InvokeFunction", "Resource": "arn:aws:lambda:eu-west-1:111111111111:function:tmp-*"},
		{"Effect": "Allow", "Action": "iam:AttachUserPolicy", "Resource": "arn:aws:iam::111111111111:user/*"},
	]
	keys(policy(doc)) == {"iam:PassRole", "iam:AttachUserPolicy"}
}

test_combination_needs_every_action if {
	three := ["ec2:ModifyInstanceAttribute", "ec2:StopInstances", "ec2:StartInstances"]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy([{"Effect": "Allow", "Action": three, "Resource": "*"}])}
	v.paths == [three]
	v.msg == "policy ci-deploy (attached to role ci) allows ec2:ModifyInstanceAttribute with ec2:StopInstances and ec2:StartInstances on every resource, which lets its holder run code as the roles of existing resources"
	keys(policy([{"Effect": "Allow", "Action": ["ec2:ModifyInstanceAttribute", "ec2:StopInstances"], "Resource": "*"}])) == set()
}

test_iam_combination_names_its_actions if {
	doc := [{"Effect": "Allow", "Action": ["sts:AssumeRole", "iam:DeleteRolePermissionsBoundary"], "Resource": "*"}]
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": policy(doc)}
	v.key == "sts:AssumeRole+iam:DeleteRolePermissionsBoundary"
	v.actions == ["sts:AssumeRole", "iam:DeleteRolePermissionsBoundary"]
	v.msg == "policy ci-deploy (attached to role ci) allows sts:AssumeRole with iam:DeleteRolePermissionsBoundary on every resource, which lets its holder escalate its privileges"
}

test_permissions_boundaries if {
	doc := [{"Effect": "Allow", "Action": ["iam:DeleteUserPermissionsBoundary", "iam:PutUserPermissionsBoundary", "iam:DeleteRolePermissionsBoundary"], "Resource": "*"}]
	keys(policy(doc)) == {"iam:DeleteUserPermissionsBoundary", "iam:PutUserPermissionsBoundary"}
	with_assume := array.concat(doc, [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "arn:aws:iam::*:role/*"}])
	keys(policy(with_assume)) == {"iam:DeleteUserPermissionsBoundary", "iam:PutUserPermissionsBoundary", "sts:AssumeRole+iam:DeleteRolePermissionsBoundary"}
}

test_detach_and_delete_policy_are_not_escalations if {
	doc := [{"Effect": "Allow", "Action": ["iam:DetachRolePolicy", "iam:DeleteRolePolicy", "iam:DetachUserPolicy", "iam:DeleteUserPolicy"], "Resource": "*"}]
	keys(policy(doc)) == set()
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
	vs := {v.key: v | some v in privilege_escalation.deny} with input as {"resource": r}
	{k | some k, _ in vs} == {"glue-jobs/iam:PassRole", "glue-jobs/existing-resources"}
	vs["glue-jobs/existing-resources"].paths == [["glue:UpdateDevEndpoint"]]
	v := vs["glue-jobs/iam:PassRole"]
	v.inline_policy == "glue-jobs"
	not v.action
	v.compute_actions == ["glue:CreateDevEndpoint", "glue:CreateJob", "glue:StartJobRun", "glue:CreateTrigger", "glue:UpdateJob", "glue:CreateSession", "glue:RunStatement"]
}

test_iam_wildcard_is_left_to_iam_002 if {
	keys(policy([{"Effect": "Allow", "Action": ["iam:*", "ec2:*"], "Resource": "*"}])) == set()
}

test_lower_case_action_lists_follow_the_named_ones if {
	every_paths := array.concat(privilege_escalation.escalations, privilege_escalation.existing_resource_escalations)
	every_names := {a | some path in every_paths; some a in path} | {"iam:PassRole"}
	partner_names := {a | some path in privilege_escalation.pass_role_escalations; some a in path}
	{a | some actions in privilege_escalation.every_resource_actions; some a in actions} == {lower(a) | some a in every_names} | {"iam:#"}
	{a | some actions in privilege_escalation.pass_role_partners; some a in actions} == {lower(a) | some a in partner_names}
	privilege_escalation.action_names == {lower(a): a | some a in (every_names | partner_names)}
	every svc, actions in object.union(privilege_escalation.every_resource_actions, privilege_escalation.pass_role_partners) {
		every a in actions {
			split(a, ":")[0] == svc
		}
	}
}

# A path that holds another is reported by the shorter one: neither table lists such a path.
test_no_path_contains_another if {
	every_paths := array.concat(privilege_escalation.escalations, privilege_escalation.existing_resource_escalations)
	every paths in [every_paths, privilege_escalation.pass_role_escalations] {
		count({[i, j] | some i, p in paths; some j, q in paths; i != j; inside(q, p)}) == 0
	}
}

inside(q, p) if {
	every a in q {
		a in p
	}
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := {"resource": policy([{"Effect": "Allow", "Action": "iam:CreatePolicyVersion", "Resource": "*"}])}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in privilege_escalation.deny with input as given}
	count(want) > 0
	{v.msg | some v in privilege_escalation.deny with input as json.remove(given, ["resource/name"])} == want
}

test_iam_paths_are_iam_and_sts_only if {
	every path in privilege_escalation.escalations {
		every action in path {
			split(action, ":")[0] in {"iam", "sts"}
		}
	}
	every path in privilege_escalation.existing_resource_escalations {
		every action in path {
			not split(action, ":")[0] in {"iam", "sts"}
		}
	}
}

# Usage as of 2026-12-06 (the window starts 2026-09-07): IAM and EC2 used, Lambda never.
deployer(statements) := {
	"uid": "arn:aws:iam::111111111111:role/deployer",
	"type": "aws.iam.role",
	"name": "deployer",
	"attributes": {
		"created": "2024-01-01T00:00:00Z",
		"assume_role_policy": {"Statement": []},
		"inline_policies": [{"name": "deploy", "document": {"Statement": statements}}],
		"usage": {
			"source": "aws.access_advisor", "granularity": "service", "complete": true, "error": "",
			"as_of": "2026-12-06T10:00:00Z", "tracked_since": "2025-11-01T10:00:00Z",
			"services": [
				{"service": "iam", "name": "IAM", "last_used": "2026-12-01T00:00:00Z"},
				{"service": "ec2", "name": "EC2", "last_used": "2026-12-01T00:00:00Z"},
				{"service": "lambda", "name": "Lambda", "last_used": null},
			],
		},
	},
}

# iam:PassRole with Lambda's pair: Lambda unused breaks the path, so the fix is offered.
test_escalation_through_an_unused_service_offers_rightsizing if {
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": deployer([
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
		{"Effect": "Allow", "Action": ["lambda:CreateFunction", "lambda:InvokeFunction"], "Resource": "*"},
	])}
	v.action == "aws.iam.rightsize_inline_policy"
	v.risk == "high"
}

# With ec2:RunInstances too, one path survives the fix (EC2 is used): a notice.
test_escalation_surviving_the_fix_stays_a_notice if {
	[v] := [v | some v in privilege_escalation.deny] with input as {"resource": deployer([
		{"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"},
		{"Effect": "Allow", "Action": ["lambda:CreateFunction", "lambda:InvokeFunction", "ec2:RunInstances"], "Resource": "*"},
	])}
	count(v.paths) == 2
	not v.action
}
