package warden.aws.iam.unattached_full_admin_test

import data.warden.aws.iam.unattached_full_admin

policy(statements, attachments) := {
	"uid": "arn:aws:iam::111111111111:policy/legacy-admin",
	"type": "aws.iam.policy",
	"name": "legacy-admin",
	"account": "111111111111",
	"attributes": {
		"aws_managed": false,
		"attachment_count": attachments,
		"document": {"Version": "2012-10-17", "Statement": statements},
		"attached_to": {"users": [], "groups": [], "roles": []},
	},
}

msgs(resource) := ks if {
	ks := {v.msg | some v in unattached_full_admin.deny} with input as {"resource": resource}
}

test_unattached_admin_violates if {
	msgs(policy({"Effect": "Allow", "Action": "*", "Resource": "*"}, 0)) == {"policy legacy-admin is attached to nothing but allows every action on every resource: attaching it anywhere makes a full administrator"}
}

test_not_action_of_nothing_violates if {
	msgs(policy([{"Effect": "Allow", "NotAction": "iam:PassRole", "Resource": "*"}, {"Effect": "Allow", "Action": "iam:PassRole", "Resource": "*"}], 0)) != set()
}

test_attached_is_left_to_iam_001 if {
	msgs(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}], 1)) == set()
}

test_service_wildcard_passes if {
	msgs(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "*"}], 0)) == set()
}

test_deny_passes if {
	msgs(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}, {"Effect": "Deny", "Action": "iam:*", "Resource": "*"}], 0)) == set()
	msgs(policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}, {"Effect": "Deny", "Action": "*", "Resource": "*"}], 0)) == set()
}

# A condition is no exemption: the message names it.
test_condition_violates_naming_it if {
	msgs(policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}], 0)) == {"policy legacy-admin is attached to nothing but allows every action on every resource under a condition (aws:MultiFactorAuthPresent): attaching it anywhere makes every session that meets it a full administrator"}
	msgs(policy([{"Effect": "Allow", "Action": "*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}], 1)) == set()
	msgs(policy([{"Effect": "Allow", "Action": "kms:*", "Resource": "*", "Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}}}], 0)) == set()
}

test_aws_managed_passes if {
	r := json.patch(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}], 0), [{"op": "replace", "path": "/attributes/aws_managed", "value": true}])
	msgs(r) == set()
}

test_resource_without_name_still_violates if {
	r := json.remove(policy([{"Effect": "Allow", "Action": "*", "Resource": "*"}], 0), ["name"])
	count(msgs(r)) == 1
}
