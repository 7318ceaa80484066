package warden.aws.iam.unused_services_test

import data.warden.aws.iam.unused_services

# The usage data is as of 2026-12-06T10:00:00Z; the 90-day window starts 2026-09-07T10:00:00Z.
services := [
	{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"},
	{"service": "lambda", "name": "AWS Lambda", "last_used": "2026-02-10T00:00:00Z", "region": "eu-west-1"},
	{"service": "sts", "name": "AWS Security Token Service", "last_used": "2026-12-05T23:00:00Z", "region": "us-east-1"},
	{"service": "kms", "name": "AWS Key Management Service", "last_used": null, "region": null},
	{"service": "logs", "name": "Amazon CloudWatch Logs", "last_used": "2026-09-07T10:00:01Z", "region": "eu-west-1"},
	{"service": "sqs", "name": "Amazon SQS", "last_used": "2026-10-01T00:00:00Z", "region": "eu-west-1"},
	{"service": "ecr", "name": "Amazon ECR", "last_used": "2026-11-01T00:00:00Z", "region": "eu-west-1"},
]

usage_data(overrides) := object.union(
	{
		"source": "aws.access_advisor",
		"granularity": "service",
		"as_of": "2026-12-06T10:00:00Z",
		"tracked_since": "2025-11-01T10:00:00Z",
		"complete": true,
		"error": "",
		"services": services,
	},
	overrides,
)

principal(type, name, attrs) := {"resource": {
	"uid": sprintf("arn:aws:iam::111111111111:%s/%s", [substring(type, 8, -1), name]),
	"type": type,
	"name": name,
	"account": "111111111111",
	"region": "global",
	"attributes": object.union({"path": "/", "created": "2025-03-10T13:20:00Z", "usage": usage_data({})}, attrs),
}}

role(attrs) := principal("aws.iam.role", "deploy", attrs)

message := "role deploy uses 5 of 7 services it is granted; unused for 90 days or more: kms (never used since tracking began on 2025-11-01), lambda (last used 2026-02-10, 299 days ago); data as of 2026-12-06"

test_role_with_unused_services if {
	unused_services.deny == {{
		"msg": message,
		"unused_services": [{"service": "kms", "last_used": null}, {"service": "lambda", "last_used": "2026-02-10T00:00:00Z"}],
		"used_services": ["ecr", "logs", "s3", "sqs", "sts"],
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as role({})
}

test_user_and_group if {
	[v] := [v | some v in unused_services.deny] with input as principal("aws.iam.user", "alice", {})
	startswith(v.msg, "user alice uses 5 of 7 services it is granted; unused for 90 days or more: kms")

	# A group carries no creation time: tracking since before the window is enough.
	group := json.remove(principal("aws.iam.group", "developers", {}), ["resource/attributes/created"])
	[g] := [v | some v in unused_services.deny] with input as group
	startswith(g.msg, "group developers uses 5 of 7 services it is granted")
}

test_all_services_used if {
	used := [s | some s in services; not s.service in {"kms", "lambda"}]
	count(unused_services.deny) == 0 with input as role({"usage": usage_data({"services": used})})
}

test_fail_closed_without_complete_data if {
	count(unused_services.deny) == 0 with input as json.remove(role({}), ["resource/attributes/usage"])
	count(unused_services.deny) == 0 with input as role({"usage": null})
	count(unused_services.deny) == 0 with input as role({"usage": usage_data({"complete": false, "error": "GetServiceLastAccessedDetails: AccessDenied"})})
	count(unused_services.deny) == 0 with input as role({"usage": usage_data({"complete": null})})
}

test_null_last_used_with_tracking_inside_the_window_counts_as_used if {
	# Tracking began 30 days before the data: kms's null proves nothing; lambda's old use does.
	[v] := [v | some v in unused_services.deny] with input as role({"usage": usage_data({"tracked_since": "2026-11-06T10:00:00Z"})})
	v.msg == "role deploy uses 6 of 7 services it is granted; unused for 90 days or more: lambda (last used 2026-02-10, 299 days ago); data as of 2026-12-06"
}

test_young_principal_is_not_judged if {
	count(unused_services.deny) == 0 with input as role({"created": "2026-10-01T00:00:00Z"})
	count(unused_services.deny) == 0 with input as role({"created": null})
	count(unused_services.deny) == 0 with input as principal("aws.iam.group", "new", {"created": "2026-12-01T00:00:00Z"})
}

test_service_linked_and_tagged_principals_are_exempt if {
	count(unused_services.deny) == 0 with input as role({"service_linked": true})
	count(unused_services.deny) == 0 with input as role({"path": "/aws-service-role/autoscaling.amazonaws.com/"})
	tagged := json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"team": "platform", "warden-least-privilege": "exempt"}}])
	count(unused_services.deny) == 0 with input as tagged
	other := json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": "no"}}])
	count(unused_services.deny) == 1 with input as other
}

test_window_from_config if {
	# Over 30 days, sqs (2026-10-01) and ecr (2026-11-01) are unused too.
	[v] := [v | some v in unused_services.deny] with input as role({}) with data.warden.config.unused_access_window_days as 30
	v.unused_services == [
		{"service": "ecr", "last_used": "2026-11-01T00:00:00Z"},
		{"service": "kms", "last_used": null},
		{"service": "lambda", "last_used": "2026-02-10T00:00:00Z"},
		{"service": "logs", "last_used": "2026-09-07T10:00:01Z"},
		{"service": "sqs", "last_used": "2026-10-01T00:00:00Z"},
	]
	startswith(v.msg, "role deploy uses 2 of 7 services it is granted; unused for 30 days or more: ecr (last used 2026-11-01, 35 days ago), kms")

	# Over 365 days, only the never-used kms.
	[w] := [v | some v in unused_services.deny] with input as role({}) with data.warden.config.unused_access_window_days as 365
	w.unused_services == [{"service": "kms", "last_used": null}]
}

test_many_unused_services_are_listed_up_to_twenty if {
	many := [{"service": sprintf("svc%03d", [i]), "last_used": null} | some i in numbers.range(1, 25)]
	[v] := [v | some v in unused_services.deny] with input as role({"usage": usage_data({"services": array.concat(services, many)})})
	count(v.unused_services) == 27
	contains(v.msg, "uses 5 of 32 services")
	contains(v.msg, "svc018 (never used since tracking began on 2025-11-01) and 7 more; data as of 2026-12-06")
}

# --- messages never decide a violation -------------------------------------------

test_principal_without_name_still_violates if {
	[v] := [v | some v in unused_services.deny] with input as json.remove(role({}), ["resource/name"])
	startswith(v.msg, "role arn:aws:iam::111111111111:role/deploy uses 5 of 7")
}

test_service_without_namespace_is_named if {
	s := array.concat(services, [{"name": "Amazon Foo", "last_used": null}, {"last_used": null}])
	[v] := [v | some v in unused_services.deny] with input as role({"usage": usage_data({"services": s})})
	v.unused_services == [
		{"service": "(unnamed service)", "last_used": null},
		{"service": "Amazon Foo", "last_used": null},
		{"service": "kms", "last_used": null},
		{"service": "lambda", "last_used": "2026-02-10T00:00:00Z"},
	]
}

# IAM Access Analyzer's findings list only the services unused for more than its age: the
# message does not count the services used, which are unknown, and says where the data
# comes from; an analyzer younger than the window concludes nothing.
analyzer_usage(days) := {
	"source": "aws.access_analyzer",
	"listed": "unused",
	"window_days": days,
	"granularity": "action",
	"as_of": "2026-12-06T10:00:00Z",
	"tracked_since": "2026-09-07T10:00:00Z",
	"complete": true,
	"error": "",
	"services": [
		{"service": "kms", "name": "kms", "last_used": null, "region": null},
		{"service": "lambda", "name": "lambda", "last_used": "2026-02-10T00:00:00Z", "region": null},
	],
}

test_analyzer_data if {
	unused_services.deny == {{
		"msg": "role deploy is granted services it does not use; unused for 90 days or more: kms (no use in the 90 days IAM Access Analyzer looks back), lambda (last used 2026-02-10, 299 days ago); data as of 2026-12-06 (IAM Access Analyzer)",
		"unused_services": [{"service": "kms", "last_used": null}, {"service": "lambda", "last_used": "2026-02-10T00:00:00Z"}],
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as role({"usage": analyzer_usage(90)})
	count(unused_services.deny) == 0 with input as role({"usage": object.union(analyzer_usage(30), {"tracked_since": "2026-11-06T10:00:00Z"})})
}
