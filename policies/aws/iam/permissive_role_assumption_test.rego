package warden.aws.iam.permissive_role_assumption_test

import data.warden.aws.iam.permissive_role_assumption

policy(statements) := {
	"uid": "arn:aws:iam::222222222222:policy/deployer",
	"type": "aws.iam.policy",
	"name": "deployer",
	"account": "222222222222",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Statement": statements},
		"attached_to": {"users": [], "groups": [], "roles": ["ci"]},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in permissive_role_assumption.deny} with input as {"resource": resource}
}

test_assume_any_role_violates if {
	[v] := [v | some v in permissive_role_assumption.deny] with input as {"resource": policy([{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}])}
	v.key == "sts:AssumeRole"
	v.msg == "policy deployer (attached to role ci) allows sts:AssumeRole on every role, which lets its holder assume any role that trusts its account"
}

test_every_role_arn_violates if {
	keys(policy([{"Effect": "Allow", "Action": ["sts:AssumeRole", "sts:TagSession"], "Resource": "arn:aws:iam::*:role/*"}])) == {"sts:AssumeRole"}
	keys(policy([{"Effect": "Allow", "Action": "sts:Assume*", "Resource": ["arn:aws:iam::222222222222:role/*"]}])) == {"sts:AssumeRole"}
}

test_inline_violates if {
	r := {
		"uid": "arn:aws:iam::222222222222:user/ops",
		"type": "aws.iam.user",
		"name": "ops",
		"attributes": {"inline_policies": [{"name": "hop", "document": {"Statement": {"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}}}]},
	}
	keys(r) == {"hop/sts:AssumeRole"}
}

test_named_roles_pass if {
	keys(policy([{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": ["arn:aws:iam::111111111111:role/deploy", "arn:aws:iam::333333333333:role/deploy-*"]}])) == set()
}

test_conditional_or_denied_passes if {
	keys(policy([{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*", "Condition": {"StringEquals": {"aws:ResourceOrgID": "o-acme1234"}}}])) == set()
	keys(policy([{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}, {"Effect": "Deny", "Action": "sts:AssumeRole", "Resource": "arn:aws:iam::*:role/*"}])) == set()
}

test_other_sts_actions_pass if {
	keys(policy([{"Effect": "Allow", "Action": ["sts:GetCallerIdentity", "sts:AssumeRoleWithWebIdentity"], "Resource": "*"}])) == set()
}

test_sts_wildcard_and_aws_managed_are_left_to_others if {
	keys(policy([{"Effect": "Allow", "Action": "sts:*", "Resource": "*"}])) == set()
	aws_managed := json.patch(policy([{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]), [{"op": "replace", "path": "/attributes/aws_managed", "value": true}])
	keys(aws_managed) == set()
}
