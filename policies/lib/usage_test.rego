package warden.lib.usage_test

import data.warden.lib.usage

# The usage data is as of 2026-12-06T10:00:00Z; the 90-day window starts 2026-09-07T10:00:00Z.
usage_data(overrides) := object.union(
	{
		"source": "aws.access_advisor",
		"granularity": "action",
		"as_of": "2026-12-06T10:00:00Z",
		"tracked_since": "2025-11-01T10:00:00Z",
		"complete": true,
		"error": "",
		"services": [
			{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"},
			{"service": "kms", "name": "AWS Key Management Service", "last_used": null, "region": null},
		],
	},
	overrides,
)

principal(type, attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:role/deploy",
	"type": type,
	"name": "deploy",
	"account": "111111111111",
	"attributes": object.union({"path": "/", "created": "2025-01-10T09:00:00Z", "usage": usage_data({})}, attrs),
}}

role(attrs) := principal("aws.iam.role", attrs)

entry(last_used) := {"last_used": last_used}

test_facts_of_a_complete_old_principal if {
	usage.facts == usage_data({}) with input as role({})
	usage.kind == "role" with input as role({})
	usage.kind == "user" with input as principal("aws.iam.user", {})
	usage.kind == "group" with input as principal("aws.iam.group", {})
}

test_no_facts_without_complete_data if {
	every attrs in [
		{"usage": null},
		{"usage": usage_data({"complete": false, "error": "job failed"})},
		{"usage": usage_data({"complete": "true"})},
		{"usage": usage_data({"as_of": null})},
		{"usage": usage_data({"tracked_since": null})},
		{"usage": usage_data({"services": null})},
	] {
		not usage.facts with input as role(attrs)
	}
	not usage.facts with input as json.remove(role({}), ["resource/attributes/usage"])
}

test_no_facts_for_other_types if {
	not usage.facts with input as principal("aws.iam.policy", {})
}

test_young_principal_is_not_judged if {
	# Created one second after the window's start.
	not usage.facts with input as role({"created": "2026-09-07T10:00:01Z"})
	usage.facts with input as role({"created": "2026-09-07T10:00:00Z"})
}

test_user_or_role_without_creation_time_is_not_judged if {
	not usage.facts with input as role({"created": null})
	not usage.facts with input as json.remove(principal("aws.iam.user", {}), ["resource/attributes/created"])
}

test_group_without_creation_time_is_judged_by_tracking if {
	usage.facts with input as json.remove(principal("aws.iam.group", {}), ["resource/attributes/created"])
	usage.facts with input as principal("aws.iam.group", {"created": null})
	not usage.facts with input as principal("aws.iam.group", {"created": "2026-11-01T00:00:00Z"})
}

test_exempt_principals if {
	not usage.facts with input as role({"service_linked": true})
	not usage.facts with input as role({"path": "/aws-service-role/ecs.amazonaws.com/"})
	not usage.facts with input as json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": "exempt"}}])
	not usage.facts with input as json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": " Exempt "}}])
	usage.facts with input as json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": "review"}}])
	usage.facts with input as role({"service_linked": false})
}

test_evidence_never_used if {
	usage.evidence(entry(null)) == "never used since tracking began on 2025-11-01" with input as role({})
}

test_never_used_counts_only_when_tracking_covers_the_window if {
	# Tracking began one second after the window's start: a null says nothing of that second.
	late := role({"usage": usage_data({"tracked_since": "2026-09-07T10:00:01Z"})})
	not usage.unused(entry(null)) with input as late
	usage.unused(entry(null)) with input as role({"usage": usage_data({"tracked_since": "2026-09-07T10:00:00Z"})})
}

test_evidence_last_used_at_the_window_start_or_before if {
	usage.evidence(entry("2026-09-07T10:00:00Z")) == "last used 2026-09-07, 90 days ago" with input as role({})
	usage.evidence(entry("2026-02-10T00:00:00Z")) == "last used 2026-02-10, 299 days ago" with input as role({})
	not usage.unused(entry("2026-09-07T10:00:01Z")) with input as role({})
	not usage.unused(entry("2026-11-30T08:00:00Z")) with input as role({})
}

test_unknown_last_use_counts_as_used if {
	not usage.unused({}) with input as role({})
	not usage.unused(entry("")) with input as role({})
	not usage.unused(entry(42)) with input as role({})
}

test_window_from_config if {
	usage.evidence(entry("2026-09-01T00:00:00Z")) == "last used 2026-09-01, 96 days ago" with input as role({})
	not usage.unused(entry("2026-09-01T00:00:00Z")) with input as role({}) with data.warden.config.unused_access_window_days as 180
	usage.unused(entry("2026-06-01T00:00:00Z")) with input as role({}) with data.warden.config.unused_access_window_days as 180
}

test_window_below_one_day_judges_nothing if {
	not usage.facts with input as role({}) with data.warden.config.unused_access_window_days as 0
	not usage.facts with input as role({}) with data.warden.config.unused_access_window_days as -5
}

test_unused_and_used_services_sorted if {
	u := usage_data({"services": [
		{"service": "sqs", "last_used": "2026-01-01T00:00:00Z"},
		{"service": "s3", "last_used": "2026-11-30T08:00:00Z"},
		{"service": "kms", "last_used": null},
		{"name": "Unnamed", "last_used": "2026-12-01T00:00:00Z"},
	]})
	usage.unused_services == [
		{"service": "kms", "last_used": null, "evidence": "never used since tracking began on 2025-11-01"},
		{"service": "sqs", "last_used": "2026-01-01T00:00:00Z", "evidence": "last used 2026-01-01, 339 days ago"},
	] with input as role({"usage": u})
	usage.used_services == ["Unnamed", "s3"] with input as role({"usage": u})
}

test_no_lists_when_not_judged if {
	not usage.unused_services with input as role({"usage": usage_data({"complete": false})})
	not usage.used_services with input as role({"usage": usage_data({"complete": false})})
	not usage.unused_actions with input as role({"usage": usage_data({"complete": false})})
	not usage.tracked_action_count with input as role({"usage": usage_data({"complete": false})})
}

test_unused_actions_only_in_used_services if {
	u := usage_data({"services": [
		{"service": "s3", "last_used": "2026-11-30T08:00:00Z", "actions": [
			{"action": "s3:PutObject", "last_used": null},
			{"action": "s3:GetObject", "last_used": "2026-11-30T08:00:00Z"},
			{"action": "s3:DeleteObject", "last_used": "2026-03-01T00:00:00Z"},
			{"last_used": null},
		]},
		{"service": "ec2", "last_used": null, "actions": [{"action": "ec2:RunInstances", "last_used": null}]},
		{"service": "iam", "last_used": "2026-12-01T00:00:00Z"},
	]})
	usage.unused_actions == [
		{"action": "s3:DeleteObject", "service": "s3", "last_used": "2026-03-01T00:00:00Z", "evidence": "last used 2026-03-01, 280 days ago"},
		{"action": "s3:PutObject", "service": "s3", "last_used": null, "evidence": "never used since tracking began on 2025-11-01"},
	] with input as role({"usage": u})
	usage.tracked_action_count == 3 with input as role({"usage": u})
}

test_listed_caps_long_lists if {
	usage.listed(["a", "b"]) == "a, b"
	items := [sprintf("s%02d", [i]) | some i in numbers.range(1, 23)]
	usage.listed(items) == concat("", [concat(", ", array.slice(items, 0, 20)), " and 3 more"])
	usage.listed([]) == ""
}

# IAM Access Analyzer's findings (listed "unused"): only what went unused for more than the
# analyzer's age, tracked_since = as_of minus that age. s3 is listed for its unused action.
analyzer_data(days, overrides) := object.union(
	{
		"source": "aws.access_analyzer",
		"listed": "unused",
		"window_days": days,
		"granularity": "action",
		"as_of": "2026-12-06T10:00:00Z",
		"tracked_since": time.format([time.add_date(time.parse_rfc3339_ns("2026-12-06T10:00:00Z"), 0, 0, 0 - days), "UTC", "2006-01-02T15:04:05Z07:00"]),
		"complete": true,
		"error": "",
		"services": [
			{"service": "kms", "name": "kms", "last_used": null, "region": null},
			{"service": "sqs", "name": "sqs", "last_used": "2026-01-01T00:00:00Z", "region": null},
			{"service": "s3", "name": "s3", "last_used": "2026-11-30T08:00:00Z", "region": null, "actions": [{"action": "s3:PutObject", "last_used": null, "region": null}]},
		],
	},
	overrides,
)

test_analyzer_data_speaks_for_what_is_unused if {
	r := role({"usage": analyzer_data(90, {})})
	[u.service | some u in usage.unused_services] == ["kms", "sqs"] with input as r
	usage.unused_services[0].evidence == "no use in the 90 days IAM Access Analyzer looks back" with input as r
	[a.action | some a in usage.unused_actions] == ["s3:PutObject"] with input as r

	# The services used, and the actions tracked, are unknown.
	not usage.all_granted with input as r
	not usage.used_services with input as r
	not usage.tracked_action_count with input as r
	usage.all_granted with input as role({})
}

test_analyzer_younger_than_the_window_judges_nothing if {
	# An analyzer of 30 days cannot speak for 90; one of 180 can.
	not usage.facts with input as role({"usage": analyzer_data(30, {})})
	not usage.unused_services with input as role({"usage": analyzer_data(30, {})})
	usage.facts with input as role({"usage": analyzer_data(180, {})})
	not usage.facts with input as role({"usage": analyzer_data(90, {})}) with data.warden.config.unused_access_window_days as 120
	not usage.facts with input as role({"usage": analyzer_data(90, {"window_days": "90"})})
	not usage.facts with input as role({"usage": object.remove(analyzer_data(90, {}), ["window_days"])})
	not usage.facts with input as role({"usage": analyzer_data(90, {"listed": "some"})})
}

test_analyzer_data_never_narrows_star if {
	star := {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
	kms := {"Statement": [{"Effect": "Allow", "Action": ["kms:*", "s3:GetObject"], "Resource": "*"}]}
	usage.rightsizing(star, {"kms"}) == {} with input as role({"usage": analyzer_data(90, {})})
	usage.rightsizing(kms, {"kms"}).action == "aws.iam.rightsize_inline_policy" with input as role({"usage": analyzer_data(90, {})})
	usage.rightsizing(star, {"kms"}).action == "aws.iam.rightsize_inline_policy" with input as role({})
}

test_analyzer_aggregate_is_not_a_policy_usage if {
	p := {"resource": {
		"uid": "arn:aws:iam::111111111111:policy/shared", "type": "aws.iam.policy", "name": "shared", "account": "111111111111",
		"attributes": {"aws_managed": false, "created": "2024-01-01T00:00:00Z", "usage": analyzer_data(90, {"aggregated": true, "principals": []})},
	}}
	not usage.kind with input as p
	not usage.facts with input as p
}
