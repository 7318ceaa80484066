package warden.aws.iam.cloudshell_full_access_test

import data.warden.aws.iam.cloudshell_full_access

policy(uid, attached_to) := {
	"uid": uid,
	"type": "aws.iam.policy",
	"name": "AWSCloudShellFullAccess",
	"account": "111111111111",
	"attributes": {
		"aws_managed": true,
		"attachment_count": count([n | some names in attached_to; some n in names]),
		"document": {"Statement": [{"Effect": "Allow", "Action": ["cloudshell:*"], "Resource": "*"}]},
		"attached_to": attached_to,
	},
}

arn := "arn:aws:iam::aws:policy/AWSCloudShellFullAccess"

test_one_violation_per_attachment if {
	vs := {v.key: v.msg | some v in cloudshell_full_access.deny} with input as {"resource": policy(arn, {"users": ["lena"], "groups": [], "roles": ["ops", "support"]})}
	vs == {
		"user/lena": "AWSCloudShellFullAccess is attached to user lena, which gives it a console shell with its credentials and file transfer",
		"role/ops": "AWSCloudShellFullAccess is attached to role ops, which gives it a console shell with its credentials and file transfer",
		"role/support": "AWSCloudShellFullAccess is attached to role support, which gives it a console shell with its credentials and file transfer",
	}
}

test_other_partition_violates if {
	count(cloudshell_full_access.deny) == 1 with input as {"resource": policy("arn:aws-us-gov:iam::aws:policy/AWSCloudShellFullAccess", {"groups": ["admins"]})}
}

test_unattached_passes if {
	count(cloudshell_full_access.deny) == 0 with input as {"resource": policy(arn, {"users": [], "groups": [], "roles": []})}
}

test_other_policies_pass if {
	count(cloudshell_full_access.deny) == 0 with input as {"resource": policy("arn:aws:iam::111111111111:policy/AWSCloudShellFullAccess", {"roles": ["ops"]})}
	count(cloudshell_full_access.deny) == 0 with input as {"resource": policy("arn:aws:iam::aws:policy/AWSCloudShellFullAccessV2", {"roles": ["ops"]})}
}

test_attachments_not_listed if {
	r := json.patch(policy(arn, {}), [{"op": "replace", "path": "/attributes/attachment_count", "value": 2}])
	[v] := [v | some v in cloudshell_full_access.deny] with input as {"resource": r}
	v.msg == "AWSCloudShellFullAccess is attached 2 times, which gives each holder a console shell with its credentials and file transfer"
}
