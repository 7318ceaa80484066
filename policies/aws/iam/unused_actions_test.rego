package warden.aws.iam.unused_actions_test

import data.warden.aws.iam.unused_actions

# The usage data is as of 2026-12-06T10:00:00Z; the 90-day window starts 2026-09-07T10:00:00Z.
services := [
	{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1", "actions": [
		{"action": "s3:GetObject", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"},
		{"action": "s3:PutObject", "last_used": null, "region": null},
		{"action": "s3:DeleteObject", "last_used": "2026-02-10T00:00:00Z", "region": "eu-west-1"},
		{"action": "s3:ListBucket", "last_used": "2026-11-29T00:00:00Z", "region": "eu-west-1"},
	]},
	{"service": "iam", "name": "AWS Identity and Access Management", "last_used": "2026-12-01T00:00:00Z", "region": "us-east-1", "actions": [
		{"action": "iam:GetRole", "last_used": "2026-12-01T00:00:00Z", "region": "us-east-1"},
		{"action": "iam:PassRole", "last_used": null, "region": null},
	]},
	# Unused as a whole: WARDEN-AWS-IAM-034's finding, not repeated here.
	{"service": "ec2", "name": "Amazon EC2", "last_used": null, "region": null, "actions": [
		{"action": "ec2:RunInstances", "last_used": null, "region": null},
	]},
	# Used, without action-level tracking.
	{"service": "sqs", "name": "Amazon SQS", "last_used": "2026-11-01T00:00:00Z", "region": "eu-west-1"},
]

usage_data(overrides) := object.union(
	{
		"source": "aws.access_advisor",
		"granularity": "action",
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

test_role_with_unused_actions if {
	unused_actions.deny == {{
		"msg": "role deploy uses 3 of the 6 actions tracked in the services it uses; unused for 90 days or more in iam, s3: iam:PassRole (never used since tracking began on 2025-11-01), s3:DeleteObject (last used 2026-02-10, 299 days ago), s3:PutObject (never used since tracking began on 2025-11-01); data as of 2026-12-06",
		"unused_actions": [
			{"action": "iam:PassRole", "last_used": null},
			{"action": "s3:DeleteObject", "last_used": "2026-02-10T00:00:00Z"},
			{"action": "s3:PutObject", "last_used": null},
		],
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as role({})
}

test_user_and_group if {
	[u] := [v | some v in unused_actions.deny] with input as principal("aws.iam.user", "alice", {})
	startswith(u.msg, "user alice uses 3 of the 6 actions")
	group := json.remove(principal("aws.iam.group", "developers", {}), ["resource/attributes/created"])
	[g] := [v | some v in unused_actions.deny] with input as group
	startswith(g.msg, "group developers uses 3 of the 6 actions")
}

test_services_unused_as_a_whole_are_left_out if {
	only_ec2 := [s | some s in services; s.service in {"ec2", "sqs"}]
	count(unused_actions.deny) == 0 with input as role({"usage": usage_data({"services": only_ec2})})
}

test_service_level_data_gives_nothing if {
	plain := [object.remove(s, ["actions"]) | some s in services]
	count(unused_actions.deny) == 0 with input as role({"usage": usage_data({"granularity": "service", "services": plain})})
}

test_every_tracked_action_used if {
	used := [object.union(s, {"actions": [a | some a in s.actions; a.last_used != null; a.last_used > "2026-09"]}) | some s in services; s.service in {"s3", "iam"}]
	count(unused_actions.deny) == 0 with input as role({"usage": usage_data({"services": used})})
}

test_null_last_used_with_tracking_inside_the_window_counts_as_used if {
	[v] := [v | some v in unused_actions.deny] with input as role({"usage": usage_data({"tracked_since": "2026-11-06T10:00:00Z"})})
	v.unused_actions == [{"action": "s3:DeleteObject", "last_used": "2026-02-10T00:00:00Z"}]
	startswith(v.msg, "role deploy uses 6 of the 7 actions tracked in the services it uses; unused for 90 days or more in s3: s3:DeleteObject (last used 2026-02-10, 299 days ago)")
}

test_fail_closed if {
	count(unused_actions.deny) == 0 with input as json.remove(role({}), ["resource/attributes/usage"])
	count(unused_actions.deny) == 0 with input as role({"usage": usage_data({"complete": false, "error": "page 2 could not be read"})})
	count(unused_actions.deny) == 0 with input as role({"created": "2026-11-20T00:00:00Z"})
	count(unused_actions.deny) == 0 with input as role({"created": null})
	count(unused_actions.deny) == 0 with input as role({"service_linked": true, "path": "/aws-service-role/ecs.amazonaws.com/"})
	tagged := json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": "exempt"}}])
	count(unused_actions.deny) == 0 with input as tagged
}

test_window_from_config if {
	# Over 7 days, s3:ListBucket (2026-11-29) is unused too; s3 (2026-11-30) is still used.
	[v] := [v | some v in unused_actions.deny] with input as role({}) with data.warden.config.unused_access_window_days as 7
	[a | some u in v.unused_actions; a := u.action] == ["iam:PassRole", "s3:DeleteObject", "s3:ListBucket", "s3:PutObject"]

	# Over 365 days: only the never-used actions.
	[w] := [v | some v in unused_actions.deny] with input as role({}) with data.warden.config.unused_access_window_days as 365
	[a | some u in w.unused_actions; a := u.action] == ["iam:PassRole", "s3:PutObject"]
}

test_principal_without_name_still_violates if {
	[v] := [v | some v in unused_actions.deny] with input as json.remove(role({}), ["resource/name"])
	startswith(v.msg, "role arn:aws:iam::111111111111:role/deploy uses 3 of the 6 actions")
}

test_malformed_actions_are_skipped if {
	odd := [object.union(s, {"actions": array.concat(s.actions, ["s3:Odd", {"last_used": null}])}) | some s in services; s.service == "s3"]
	[v] := [v | some v in unused_actions.deny] with input as role({"usage": usage_data({"services": odd})})
	[a | some u in v.unused_actions; a := u.action] == ["s3:DeleteObject", "s3:PutObject"]
}

# From IAM Access Analyzer's findings, which list only unused actions, the message does not
# count the actions tracked.
test_analyzer_data if {
	u := {
		"source": "aws.access_analyzer", "listed": "unused", "window_days": 90, "granularity": "action",
		"as_of": "2026-12-06T10:00:00Z", "tracked_since": "2026-09-07T10:00:00Z", "complete": true, "error": "",
		"services": [{"service": "s3", "name": "s3", "last_used": "2026-11-30T08:00:00Z", "region": null, "actions": [
			{"action": "s3:PutObject", "last_used": null, "region": null},
			{"action": "s3:DeleteObject", "last_used": "2026-02-10T00:00:00Z", "region": null},
		]}],
	}
	unused_actions.deny == {{
		"msg": "role deploy is granted actions it does not use (IAM Access Analyzer); unused for 90 days or more in s3: s3:DeleteObject (last used 2026-02-10, 299 days ago), s3:PutObject (no use in the 90 days IAM Access Analyzer looks back); data as of 2026-12-06",
		"unused_actions": [{"action": "s3:DeleteObject", "last_used": "2026-02-10T00:00:00Z"}, {"action": "s3:PutObject", "last_used": null}],
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as role({"usage": u})
}
