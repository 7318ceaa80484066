package warden.aws.iam.managed_policy_barely_used_test

import data.warden.aws.iam.managed_policy_barely_used

# The usage data is as of 2026-12-06T10:00:00Z; the 90-day window starts 2026-09-07T10:00:00Z.
# AdministratorAccess grants every service: here 30, of which s3 and sts are used.
admin_services := array.concat(
	[
		{"service": "s3", "name": "Amazon S3", "last_used": "2026-11-30T08:00:00Z", "region": "eu-west-1"},
		{"service": "sts", "name": "AWS Security Token Service", "last_used": "2026-12-05T23:00:00Z", "region": "us-east-1"},
		{"service": "iam", "name": "AWS Identity and Access Management", "last_used": "2026-01-15T00:00:00Z", "region": "us-east-1"},
	],
	[{"service": sprintf("svc%02d", [i]), "last_used": null, "region": null} | some i in numbers.range(1, 27)],
)

usage_data(overrides) := object.union(
	{
		"source": "aws.access_advisor",
		"granularity": "service",
		"as_of": "2026-12-06T10:00:00Z",
		"tracked_since": "2025-11-01T10:00:00Z",
		"complete": true,
		"error": "",
		"services": admin_services,
	},
	overrides,
)

managed(name) := {"arn": sprintf("arn:aws:iam::aws:policy/%s", [name]), "name": name}

principal(type, name, attrs) := {"resource": {
	"uid": sprintf("arn:aws:iam::111111111111:%s/%s", [substring(type, 8, -1), name]),
	"type": type,
	"name": name,
	"account": "111111111111",
	"region": "global",
	"attributes": object.union(
		{
			"path": "/",
			"created": "2025-03-10T13:20:00Z",
			"attached_policies": [managed("AdministratorAccess"), {"arn": "arn:aws:iam::111111111111:policy/ci-extra", "name": "ci-extra"}],
			"usage": usage_data({}),
		},
		attrs,
	),
}}

role(attrs) := principal("aws.iam.role", "ci", attrs)

test_administrator_access_barely_used if {
	managed_policy_barely_used.deny == {{
		"msg": "role ci has the AWS-managed policy AdministratorAccess attached but used 2 of its 30 services within 90 days: s3, sts; data as of 2026-12-06",
		"key": "AdministratorAccess",
		"policy": "arn:aws:iam::aws:policy/AdministratorAccess",
		"used_services": ["s3", "sts"],
		"granted_services": 30,
		"window_days": 90,
		"as_of": "2026-12-06T10:00:00Z",
	}} with input as role({})
}

test_user_and_group_and_other_partitions if {
	[u] := [v | some v in managed_policy_barely_used.deny] with input as principal("aws.iam.user", "ops", {"attached_policies": [{"arn": "arn:aws-us-gov:iam::aws:policy/PowerUserAccess"}]})
	u.key == "PowerUserAccess"
	startswith(u.msg, "user ops has the AWS-managed policy PowerUserAccess attached but used 2 of its 30 services")
	group := json.remove(principal("aws.iam.group", "admins", {}), ["resource/attributes/created"])
	[g] := [v | some v in managed_policy_barely_used.deny] with input as group
	startswith(g.msg, "group admins has the AWS-managed policy AdministratorAccess attached")
}

test_used_at_the_small_share_and_above if {
	# 5 services used: still a small part; 6: not.
	five := array.concat(admin_services, [{"service": s, "last_used": "2026-12-01T00:00:00Z"} | some s in ["ec2", "lambda", "logs"]])
	[v] := [v | some v in managed_policy_barely_used.deny] with input as role({"usage": usage_data({"services": five})})
	v.used_services == ["ec2", "lambda", "logs", "s3", "sts"]
	six := array.concat(five, [{"service": "sqs", "last_used": "2026-12-01T00:00:00Z"}])
	count(managed_policy_barely_used.deny) == 0 with input as role({"usage": usage_data({"services": six})})
	count(managed_policy_barely_used.deny) == 1 with input as role({"usage": usage_data({"services": six})})
		with data.warden.config.managed_policy_small_share_services as 6
}

test_nothing_used_at_all if {
	none := [object.union(s, {"last_used": null}) | some s in admin_services]
	[v] := [v | some v in managed_policy_barely_used.deny] with input as role({"usage": usage_data({"services": none})})
	v.msg == "role ci has the AWS-managed policy AdministratorAccess attached but used 0 of its 30 services within 90 days; data as of 2026-12-06"
}

test_service_full_access_unused if {
	attrs := {"attached_policies": [managed("IAMFullAccess")]}
	[v] := [v | some v in managed_policy_barely_used.deny] with input as role(attrs)
	v.msg == "role ci has the AWS-managed policy IAMFullAccess attached but used 0 of its 1 service within 90 days; data as of 2026-12-06"
	v.used_services == []

	# iam used within the window: the whole of the policy is used.
	used := [object.union(s, {"last_used": "2026-12-01T00:00:00Z"}) | some s in admin_services; s.service == "iam"]
	count(managed_policy_barely_used.deny) == 0 with input as role(object.union(attrs, {"usage": usage_data({"services": used})}))

	# A service the data does not list cannot be judged.
	no_iam := [s | some s in admin_services; s.service != "iam"]
	count(managed_policy_barely_used.deny) == 0 with input as role(object.union(attrs, {"usage": usage_data({"services": no_iam})}))
}

test_two_broad_policies_two_findings if {
	attrs := {"attached_policies": [managed("AdministratorAccess"), managed("IAMFullAccess"), managed("AmazonS3FullAccess")]}
	{v.key | some v in managed_policy_barely_used.deny} == {"AdministratorAccess", "IAMFullAccess"} with input as role(attrs)
}

test_other_policies_are_not_judged if {
	for_names := [managed("ReadOnlyAccess"), {"arn": "arn:aws:iam::111111111111:policy/AdministratorAccess", "name": "AdministratorAccess"}, managed("job-function/AdministratorAccess"), {"name": "AdministratorAccess"}, {"arn": 7}]
	count(managed_policy_barely_used.deny) == 0 with input as role({"attached_policies": for_names})
	count(managed_policy_barely_used.deny) == 0 with input as role({"attached_policies": null})
	count(managed_policy_barely_used.deny) == 0 with input as json.remove(role({}), ["resource/attributes/attached_policies"])
}

test_fail_closed if {
	count(managed_policy_barely_used.deny) == 0 with input as json.remove(role({}), ["resource/attributes/usage"])
	count(managed_policy_barely_used.deny) == 0 with input as role({"usage": usage_data({"complete": false, "error": "job failed"})})
	count(managed_policy_barely_used.deny) == 0 with input as role({"created": "2026-11-20T00:00:00Z"})
	count(managed_policy_barely_used.deny) == 0 with input as role({"created": null})
	count(managed_policy_barely_used.deny) == 0 with input as role({"path": "/aws-service-role/support.amazonaws.com/"})
	tagged := json.patch(role({}), [{"op": "add", "path": "/resource/tags", "value": {"warden-least-privilege": "exempt"}}])
	count(managed_policy_barely_used.deny) == 0 with input as tagged

	# Tracking began within the window: the never-used services count as used.
	count(managed_policy_barely_used.deny) == 0 with input as role({"usage": usage_data({"tracked_since": "2026-11-06T10:00:00Z"})})
}

test_window_from_config if {
	# Over 365 days, iam (2026-01-15) counts as used too.
	[v] := [v | some v in managed_policy_barely_used.deny] with input as role({}) with data.warden.config.unused_access_window_days as 365
	v.used_services == ["iam", "s3", "sts"]
	contains(v.msg, "used 3 of its 30 services within 365 days: iam, s3, sts")
}

test_principal_without_name_still_violates if {
	[v] := [v | some v in managed_policy_barely_used.deny] with input as json.remove(role({}), ["resource/name"])
	startswith(v.msg, "role arn:aws:iam::111111111111:role/ci has the AWS-managed policy AdministratorAccess")
}

# IAM Access Analyzer's findings say what is unused, not what is used: the share of used
# services is unknown and the policy does not fire, however much is found unused.
test_analyzer_data_does_not_fire if {
	u := usage_data({
		"source": "aws.access_analyzer", "listed": "unused", "window_days": 90, "tracked_since": "2026-09-07T10:00:00Z",
		"services": [{"service": sprintf("svc%02d", [i]), "last_used": null, "region": null} | some i in numbers.range(1, 27)],
	})
	count(managed_policy_barely_used.deny) == 0 with input as role({"usage": u})
	count(managed_policy_barely_used.deny) == 1 with input as role({})
}
