package warden.aws.iam.negated_grant_test

import data.warden.aws.iam.negated_grant

policy(statements) := {
	"uid": "arn:aws:iam::aws:policy/PowerUserAccess",
	"type": "aws.iam.policy",
	"name": "PowerUserAccess",
	"account": "222222222222",
	"attributes": {
		"aws_managed": true,
		"attachment_count": 1,
		"document": {"Version": "2012-10-17", "Statement": statements},
		"attached_to": {"users": [], "groups": ["staging-developers"], "roles": []},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in negated_grant.deny} with input as {"resource": resource}
}

test_not_action_on_every_resource_violates if {
	r := policy([
		{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*", "account:*"], "Resource": "*"},
		{"Effect": "Allow", "Action": ["iam:CreateServiceLinkedRole", "iam:ListRoles"], "Resource": "*"},
	])
	[v] := [v | some v in negated_grant.deny] with input as {"resource": r}
	v.key == "#0"
	v.msg == `policy PowerUserAccess (attached to group staging-developers): Allow statement #0 uses NotAction ["iam:*", "organizations:*", "account:*"] on a broad resource, so it grants everything it does not name`
}

test_sid_is_the_key if {
	keys(policy([{"Sid": "AllButIam", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}])) == {"AllButIam"}
}

test_empty_sid_falls_back_to_position if {
	keys(policy([{"Sid": "", "Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}])) == {"#0"}
}

test_not_resource_violates if {
	r := {
		"uid": "arn:aws:iam::222222222222:role/support-tools",
		"type": "aws.iam.role",
		"name": "support-tools",
		"attributes": {"inline_policies": [{"name": "s3-except-secrets", "document": {"Statement": [{
			"Sid": "ReadAllButSecrets",
			"Effect": "Allow",
			"Action": "s3:GetObject",
			"NotResource": "arn:aws:s3:::acme-staging-secrets/*",
		}]}}]},
	}
	[v] := [v | some v in negated_grant.deny] with input as {"resource": r}
	v.key == "s3-except-secrets/ReadAllButSecrets"
	v.inline_policy == "s3-except-secrets"
	not v.action
}

test_not_action_on_scoped_resource_passes if {
	keys(policy([{"Effect": "Allow", "NotAction": "iam:*", "Resource": ["arn:aws:s3:::acme-sandbox", "arn:aws:s3:::acme-sandbox/*"]}])) == set()
}

test_deny_not_action_passes if {
	doc := [
		{"Effect": "Allow", "Action": "ec2:*", "Resource": "*"},
		{"Effect": "Deny", "NotAction": ["iam:*", "sts:*", "support:*"], "Resource": "*", "Condition": {"StringNotEquals": {"aws:RequestedRegion": ["eu-west-1"]}}},
	]
	keys(policy(doc)) == set()
}

test_conditional_allow_passes if {
	doc := [{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*", "Condition": {"StringEquals": {"aws:RequestedRegion": "eu-west-1"}}}]
	keys(policy(doc)) == set()
}

test_deny_everything_overrides if {
	doc := [
		{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
		{"Effect": "Deny", "Action": "*", "Resource": "*"},
	]
	keys(policy(doc)) == set()
}

test_not_resource_denied_action_passes if {
	doc := [
		{"Effect": "Allow", "Action": "s3:Get*", "NotResource": "arn:aws:s3:::acme-secrets/*"},
		{"Effect": "Deny", "Action": "s3:*", "Resource": "*"},
	]
	keys(policy(doc)) == set()
}

test_not_resource_naming_everything_passes if {
	keys(policy([{"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "*"}])) == set()
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := {"resource": policy([{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}])}
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in negated_grant.deny with input as given}
	count(want) > 0
	{v.msg | some v in negated_grant.deny with input as json.remove(given, ["resource/name"])} == want
}
