package warden.aws.iam.managed_policy_unused_test

import data.warden.aws.iam.managed_policy_unused

# The aggregated usage of the principals of policy shared, as of 2026-12-06T10:00:00Z; the
# 90-day window starts 2026-09-07T10:00:00Z.
services := [
	{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1", "actions": [
		{"action": "s3:GetObject", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"},
		{"action": "s3:PutObject", "last_used": null, "region": null},
	]},
	{"service": "iam", "name": "AWS Identity and Access Management", "last_used": "2026-12-01T00:00:00Z", "region": "us-east-1", "actions": [
		{"action": "iam:GetRole", "last_used": "2026-12-01T00:00:00Z", "region": "us-east-1"},
		# Granted by another policy of a principal: this one cannot remove it.
		{"action": "iam:PassRole", "last_used": null, "region": null},
	]},
	{"service": "kms", "name": "AWS Key Management Service", "last_used": null, "region": null},
	{"service": "sqs", "name": "Amazon SQS", "last_used": "2026-02-10T00:00:00Z", "region": "eu-west-1"},
]

principals := [
	{"arn": "arn:aws:iam::111111111111:role/deploy", "type": "aws.iam.role", "name": "deploy", "created": "2024-01-01T00:00:00Z", "path": "/", "service_linked": false},
	{"arn": "arn:aws:iam::111111111111:user/ci", "type": "aws.iam.user", "name": "ci", "created": "2025-01-01T00:00:00Z", "path": "/", "service_linked": false},
]

usage_data(overrides) := object.union(
	{
		"source": "aws.access_advisor",
		"aggregated": true,
		"granularity": "action",
		"as_of": "2026-12-06T10:00:00Z",
		"tracked_since": "2025-11-01T10:00:00Z",
		"complete": true,
		"error": "",
		"services": services,
		"principals": principals,
	},
	overrides,
)

document := {"Version": "2012-10-17", "Statement": [
	{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject", "kms:*", "sqs:SendMessage", "iam:GetRole"], "Resource": "*"},
	{"Effect": "Deny", "Action": "kms:ScheduleKeyDeletion", "Resource": "*"},
]}

policy(attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:policy/shared",
	"type": "aws.iam.policy",
	"name": "shared",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{"aws_managed": false, "created": "2024-01-01T00:00:00Z", "attachment_count": 2, "document": document, "usage": usage_data({})},
		attrs,
	),
}}

test_unused_services_and_named_actions if {
	managed_policy_unused.deny == {{
		"msg": "customer-managed policy shared, attached to 2 principals (ci, deploy), grants what none of them used for 90 days or more: kms (never used since tracking began on 2025-11-01), sqs (last used 2026-02-10, 299 days ago), s3:PutObject (never used since tracking began on 2025-11-01); data as of 2026-12-06",
		"unused_services": [{"service": "kms", "last_used": null}, {"service": "sqs", "last_used": "2026-02-10T00:00:00Z"}],
		"unused_actions": [{"action": "s3:PutObject", "last_used": null}],
		"principals": ["ci", "deploy"],
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as policy({})
}

# "*" names every service: each unused one is reported.
test_star_names_every_service if {
	some v in managed_policy_unused.deny with input as policy({"document": {"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*"}}})
	[u.service | some u in v.unused_services] == ["kms", "sqs"]
	v.unused_actions == []
}

test_nothing_unused_named if {
	count(managed_policy_unused.deny) == 0 with input as policy({"document": {"Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "iam:GetRole"], "Resource": "*"}]}})
}

# A wildcard service part is not the service's own pattern: nothing the fix could remove.
test_wildcard_service_part_not_judged if {
	count(managed_policy_unused.deny) == 0 with input as policy({"document": {"Statement": [{"Effect": "Allow", "Action": ["k*:*", "s3:GetObject"], "Resource": "*"}]}})
}

not_judged := {
	"incomplete": {"usage": usage_data({"complete": false, "error": "no usage for role deploy"})},
	"no usage": {"usage": null},
	"aws-managed": {"aws_managed": true},
	"not aggregated": {"usage": usage_data({"aggregated": false})},
	"policy younger than the window": {"created": "2026-10-01T00:00:00Z"},
	"a principal younger than the window": {"usage": usage_data({"principals": array.concat(principals, [{"arn": "arn:aws:iam::111111111111:user/new", "type": "aws.iam.user", "name": "new", "created": "2026-11-01T00:00:00Z"}])})},
	"a principal without a creation time": {"usage": usage_data({"principals": [{"arn": "arn:aws:iam::111111111111:role/x", "type": "aws.iam.role", "name": "x"}]})},
	"a service-linked principal": {"usage": usage_data({"principals": [object.union(principals[0], {"service_linked": true})]})},
	"a principal tagged exempt": {"usage": usage_data({"principals": [object.union(principals[0], {"least_privilege_tag": " Exempt "})]})},
	"the policy tagged exempt": {"tags": {"warden-least-privilege": "exempt"}},
}

# judged_anyway are the cases of not_judged that produce a finding: none should.
judged_anyway contains name if {
	some name, attrs in not_judged
	resource := object.union(policy(object.remove(attrs, ["tags"])), {"resource": {"tags": object.get(attrs, "tags", {})}})
	count(managed_policy_unused.deny) > 0 with input as resource
}

test_not_judged if count(judged_anyway) == 0

# A group without a creation time is judged through the data alone, as a group is.
test_group_without_creation_time_judged if {
	count(managed_policy_unused.deny) == 1 with input as policy({"usage": usage_data({"principals": [{"arn": "arn:aws:iam::111111111111:group/ops", "type": "aws.iam.group", "name": "ops", "created": null}]})})
}

# A policy's usage needs what each principal used: the collector marks it incomplete when a
# principal's data comes from IAM Access Analyzer, and usage shaped like the analyzer's
# (listed "unused") is not judged either.
test_analyzer_data_does_not_fire if {
	incomplete := usage_data({"complete": false, "error": "the usage of role deploy comes from IAM Access Analyzer, which lists only what is unused: a policy's usage needs what each principal used"})
	count(managed_policy_unused.deny) == 0 with input as policy({"usage": incomplete})
	analyzer := usage_data({"source": "aws.access_analyzer", "listed": "unused", "window_days": 90, "tracked_since": "2026-09-07T10:00:00Z"})
	count(managed_policy_unused.deny) == 0 with input as policy({"usage": analyzer})
	count(managed_policy_unused.deny) == 1 with input as policy({})
}
