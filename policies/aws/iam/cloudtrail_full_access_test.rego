package warden.aws.iam.cloudtrail_full_access_test

import data.warden.aws.iam.cloudtrail_full_access

policy(statements) := {
	"uid": "arn:aws:iam::333333333333:policy/trail-admin",
	"type": "aws.iam.policy",
	"name": "trail-admin",
	"account": "333333333333",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Statement": statements},
		"attached_to": {"users": [], "groups": ["log-admins"], "roles": []},
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in cloudtrail_full_access.deny} with input as {"resource": resource}
}

test_cloudtrail_wildcard_violates if {
	[v] := [v | some v in cloudtrail_full_access.deny] with input as {"resource": policy([{"Effect": "Allow", "Action": "CloudTrail:*", "Resource": "*"}])}
	v.key == "cloudtrail"
	v.msg == "policy trail-admin (attached to group log-admins) allows every cloudtrail action (cloudtrail:*) on every resource, which lets its holder stop, delete or redirect the audit trails"
}

test_not_action_violates if {
	keys(policy([{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}])) == {"cloudtrail"}
}

test_inline_violates_with_its_name if {
	r := {
		"uid": "arn:aws:iam::333333333333:role/trail-operator",
		"type": "aws.iam.role",
		"name": "trail-operator",
		"attributes": {"inline_policies": [{"name": "trails", "document": {"Statement": {"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "*"}}}]},
	}
	[v] := [v | some v in cloudtrail_full_access.deny] with input as {"resource": r}
	v.key == "trails/cloudtrail"
	v.inline_policy == "trails"
}

test_read_only_passes if {
	keys(policy([{"Effect": "Allow", "Action": ["cloudtrail:Get*", "cloudtrail:Describe*", "cloudtrail:LookupEvents"], "Resource": "*"}])) == set()
}

test_one_trail_passes if {
	keys(policy([{"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "arn:aws:cloudtrail:eu-west-1:333333333333:trail/org-trail"}])) == set()
}

test_deny_of_stop_logging_leaves_it_broad_but_full_deny_passes if {
	allow := {"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "*"}
	keys(policy([allow, {"Effect": "Deny", "Action": ["cloudtrail:StopLogging", "cloudtrail:DeleteTrail"], "Resource": "*"}])) == {"cloudtrail"}
	keys(policy([allow, {"Effect": "Deny", "Action": "cloudtrail:*", "Resource": "*"}])) == set()
}

test_conditional_allow_passes if {
	keys(policy([{"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "*", "Condition": {"StringEquals": {"aws:PrincipalTag/role": "log-admin"}}}])) == set()
}

test_full_admin_is_left_to_iam_001 if {
	keys(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}])) == set()
}

test_unattached_passes if {
	keys(json.patch(policy([{"Effect": "Allow", "Action": "cloudtrail:*", "Resource": "*"}]), [{"op": "replace", "path": "/attributes/attachment_count", "value": 0}])) == set()
}
