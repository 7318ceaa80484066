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

# Usage as of 2026-12-06 (the window starts 2026-09-07): Marketplace never used, S3 used.
usage_of(marketplace_last_used) := {
	"source": "aws.access_advisor", "granularity": "service", "complete": true, "error": "",
	"as_of": "2026-12-06T10:00:00Z", "tracked_since": "2025-11-01T10:00:00Z",
	"services": [
		{"service": "aws-marketplace", "name": "AWS Marketplace", "last_used": marketplace_last_used},
		{"service": "s3", "name": "Amazon S3", "last_used": "2026-12-01T00:00:00Z"},
	],
}

buyer(statements, marketplace_last_used) := {
	"uid": "arn:aws:iam::111111111111:user/olga",
	"type": "aws.iam.user",
	"name": "olga",
	"attributes": {
		"created": "2024-01-01T00:00:00Z",
		"inline_policies": [{"name": "buy", "document": {"Statement": statements}}],
		"usage": usage_of(marketplace_last_used),
	},
}

# Where usage shows Marketplace unused, the finding offers the right-sizing fix, with its
# risk and window; used, or in a document the fix could not narrow, it stays a notice.
test_unused_marketplace_offers_rightsizing if {
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": buyer([{"Effect": "Allow", "Action": ["aws-marketplace:Subscribe", "s3:GetObject"], "Resource": "*"}], null)}
	v.action == "aws.iam.rightsize_inline_policy"
	v.risk == "high"
	v.window_days == 90
}

test_used_marketplace_stays_a_notice if {
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": buyer([{"Effect": "Allow", "Action": "aws-marketplace:Subscribe", "Resource": "*"}], "2026-11-01T00:00:00Z")}
	not v.action
}

test_not_action_document_stays_a_notice if {
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": buyer([{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}], null)}
	not v.action
}

test_wildcard_service_part_stays_a_notice if {
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": buyer([{"Effect": "Allow", "Action": ["aws-market*:Subscribe"], "Resource": "*"}], null)}
	not v.action
}

# A customer-managed policy with its principals' usage offers the managed policy's fix.
test_managed_policy_offers_its_fix if {
	r := object.union(policy([{"Effect": "Allow", "Action": "aws-marketplace:*", "Resource": "*"}]), {"attributes": {
		"created": "2024-01-01T00:00:00Z",
		"usage": object.union(usage_of(null), {"aggregated": true, "principals": [{"arn": "arn:aws:iam::111111111111:user/olga", "type": "aws.iam.user", "name": "olga", "created": "2024-01-01T00:00:00Z"}]}),
	}})
	[v] := [v | some v in marketplace_subscribe.deny] with input as {"resource": r}
	v.action == "aws.iam.rightsize_managed_policy"
	v.risk == "high"
}
