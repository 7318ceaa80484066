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
