package warden.aws.iam.marketplace_subscribe_test

import data.warden.aws.iam.marketplace_subscribe

policy(statements) := {
	"uid": "arn:aws:iam::111111111111:policy/procurement",
	"type": "aws.iam.policy",
	"name": "procurement",
	"account": "111111111111",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Statement": statements},
		"attached_to": {"users": ["olga"], "groups": [], "roles": []},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in marketplace_subscribe.deny} with input as {"resource": resource}
}

test_subscribe_on_every_resource_violates if {
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": policy([{"Effect": "Allow", "Action": ["aws-marketplace:Subscribe", "aws-marketplace:ViewSubscriptions"], "Resource": "*"}])}
	v.key == "aws-marketplace:Subscribe"
	v.msg == "policy procurement (attached to user olga) allows aws-marketplace:Subscribe on every resource, which lets its holder subscribe the account to any Marketplace product"
}

test_service_wildcard_violates if {
	keys(policy([{"Effect": "Allow", "Action": "aws-marketplace:*", "Resource": "*"}])) == {"aws-marketplace:Subscribe"}
}

test_inline_violates if {
	r := {
		"uid": "arn:aws:iam::111111111111:group/buyers",
		"type": "aws.iam.group",
		"name": "buyers",
		"attributes": {"inline_policies": [{"name": "marketplace", "document": {"Statement": [{"Effect": "Allow", "Action": "aws-marketplace:subscribe", "Resource": "*"}]}}]},
	}
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": r}
	v.key == "marketplace/aws-marketplace:Subscribe"
}

test_conditional_or_view_only_passes if {
	keys(policy([{"Effect": "Allow", "Action": "aws-marketplace:Subscribe", "Resource": "*", "Condition": {"ForAnyValue:StringEquals": {"aws-marketplace:ProductId": ["prod-abc123"]}}}])) == set()
	keys(policy([{"Effect": "Allow", "Action": ["aws-marketplace:ViewSubscriptions", "aws-marketplace:Unsubscribe"], "Resource": "*"}])) == set()
}

test_deny_overrides if {
	keys(policy([{"Effect": "Allow", "Action": "aws-marketplace:*", "Resource": "*"}, {"Effect": "Deny", "Action": "aws-marketplace:Subscribe", "Resource": "*"}])) == set()
}

test_full_admin_is_left_to_iam_001 if {
	keys(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}])) == set()
}
