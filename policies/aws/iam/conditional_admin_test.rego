package warden.aws.iam.conditional_admin_test

import data.warden.aws.iam.conditional_admin

mfa := {"Bool": {"aws:MultiFactorAuthPresent": "true"}}

policy(statements) := {
	"uid": "arn:aws:iam::111111111111:policy/mfa-admin",
	"type": "aws.iam.policy",
	"name": "mfa-admin",
	"account": "111111111111",
	"attributes": {
		"aws_managed": false,
		"attachment_count": 1,
		"document": {"Version": "2012-10-17", "Statement": statements},
		"attached_to": {"users": [], "groups": ["admins"], "roles": []},
	},
}

violations(resource) := vs if {
	vs := [v | some v in conditional_admin.deny] with input as {"resource": resource}
}

keys(resource) := {v.key | some v in violations(resource)}

test_admin_under_mfa_violates_naming_the_condition if {
	[v] := violations(policy({"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa}))
	v.msg == "policy mfa-admin (attached to group admins) allows every action on every resource under a condition (aws:MultiFactorAuthPresent): every session that meets it is a full administrator"
	v.conditions == ["aws:MultiFactorAuthPresent"]
	v.key == "*"
}

test_conditions_are_named_sorted if {
	cond := {"IpAddress": {"aws:SourceIp": ["203.0.113.0/24"]}, "Bool": {"aws:MultiFactorAuthPresent": "true"}}
	[v] := violations(policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": cond}]))
	v.conditions == ["aws:MultiFactorAuthPresent", "aws:SourceIp"]
}

test_inline_in_every_principal_violates if {
	every kind in ["user", "group", "role"] {
		r := {
			"uid": sprintf("arn:aws:iam::111111111111:%s/ops", [kind]),
			"type": sprintf("aws.iam.%s", [kind]),
			"name": "ops",
			"attributes": {"inline_policies": [{"name": "break-glass", "document": {"Statement": {"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa}}}]},
		}
		[v] := violations(r)
		v.key == "break-glass/*"
		v.inline_policy == "break-glass"
	}
}

test_service_admin_under_a_condition_violates if {
	cond := {"StringEquals": {"aws:PrincipalTag/team": "security"}}
	keys(policy([{"Effect": "Allow", "Action": ["kms:*", "cloudtrail:*", "s3:*"], "Resource": "*", "Condition": cond}])) == {"kms", "cloudtrail"}
}

# Without a condition the grant is WARDEN-AWS-IAM-001's or -002's; a scoped or denied one is
# no grant.
test_unconditional_or_scoped_grants_pass if {
	keys(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}])) == set()
	keys(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}])) == set()
	keys(policy([{"Effect": "Allow", "Action": "*", "Resource": "arn:aws:s3:::acme-logs/*", "Condition": mfa}])) == set()
	keys(policy([{"Effect": "Allow", "Action": ["s3:*", "ec2:Describe*"], "Resource": "*", "Condition": mfa}])) == set()
	keys(policy([
		{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa},
		{"Effect": "Deny", "Action": "*", "Resource": "*"},
	])) == set()
}

# Unconditional admin beside a conditional one: WARDEN-AWS-IAM-001 reports the document.
test_unconditional_admin_in_the_same_document_is_left_to_iam_001 if {
	keys(policy([
		{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa},
		{"Effect": "Allow", "Action": "*", "Resource": "*"},
	])) == set()
}

# Conditional everything beside unconditional iam:*: the conditional admin is reported, and
# iam:* stays WARDEN-AWS-IAM-002's.
test_conditional_admin_beside_a_service_grant if {
	keys(policy([
		{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa},
		{"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
	])) == {"*"}
	keys(policy([
		{"Effect": "Allow", "Action": "kms:*", "Resource": "*", "Condition": mfa},
		{"Effect": "Allow", "Action": "iam:*", "Resource": "*"},
	])) == {"kms"}
}

# A conditional Deny (the usual "deny everything without MFA") takes nothing away: the
# Allow is full admin for MFA sessions, and WARDEN-AWS-IAM-001 reports it.
test_mfa_enforced_by_a_conditional_deny_is_left_to_iam_001 if {
	keys(policy([
		{"Effect": "Allow", "Action": "*", "Resource": "*"},
		{"Effect": "Deny", "Action": "*", "Resource": "*", "Condition": {"BoolIfExists": {"aws:MultiFactorAuthPresent": "false"}}},
	])) == set()
}

test_unattached_policy_passes if {
	r := json.patch(policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa}]), [{"op": "replace", "path": "/attributes/attachment_count", "value": 0}])
	keys(r) == set()
}

test_resource_without_name_still_violates if {
	given := policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": mfa}])
	count(violations(json.remove(given, ["name"]))) == 1
}
