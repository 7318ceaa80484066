package warden.aws.iam.confused_deputy_test

import data.warden.aws.iam.confused_deputy

role(statement) := {
	"uid": "arn:aws:iam::111111111111:role/config-delivery",
	"type": "aws.iam.role",
	"name": "config-delivery",
	"account": "111111111111",
	"attributes": {"service_linked": false, "assume_role_policy": {"Version": "2012-10-17", "Statement": statement}},
}

trust(service) := {"Effect": "Allow", "Principal": {"Service": service}, "Action": "sts:AssumeRole"}

keys(resource) := ks if {
	ks := {v.key | some v in confused_deputy.deny} with input as {"resource": resource}
}

test_service_without_condition_violates if {
	[v] := [v | some v in confused_deputy.deny] with input as {"resource": role([trust("config.amazonaws.com")])}
	v.key == "config.amazonaws.com"
	v.msg == "role config-delivery lets config.amazonaws.com assume it without an aws:SourceAccount or aws:SourceArn condition, so the service can act with it for another account (confused deputy)"
}

test_single_statement_and_service_list if {
	keys(role(trust(["lambda.amazonaws.com", "states.amazonaws.com", "secretsmanager.amazonaws.com"]))) == {"lambda.amazonaws.com", "states.amazonaws.com"}
}

test_source_account_or_arn_passes if {
	keys(role([object.union(trust("config.amazonaws.com"), {"Condition": {"StringEquals": {"AWS:SourceAccount": "111111111111"}}})])) == set()
	keys(role([object.union(trust("sns.amazonaws.com"), {"Condition": {"ArnLike": {"aws:SourceArn": "arn:aws:sns:eu-west-1:111111111111:alerts"}}})])) == set()
	keys(role([object.union(trust("sns.amazonaws.com"), {"Condition": {"StringEquals": {"aws:SourceOrgID": "o-acme1234"}}})])) == set()
}

test_weak_conditions_violate if {
	keys(role([object.union(trust("config.amazonaws.com"), {"Condition": {"StringEqualsIfExists": {"aws:SourceAccount": "111111111111"}}})])) == {"config.amazonaws.com"}
	keys(role([object.union(trust("config.amazonaws.com"), {"Condition": {"StringNotEquals": {"aws:SourceAccount": "999999999999"}}})])) == {"config.amazonaws.com"}
	keys(role([object.union(trust("config.amazonaws.com"), {"Condition": {"Bool": {"aws:SecureTransport": "true"}}})])) == {"config.amazonaws.com"}
}

test_service_linked_roles_pass if {
	keys(json.patch(role([trust("rds.amazonaws.com")]), [{"op": "replace", "path": "/attributes/service_linked", "value": true}])) == set()
	linked := object.union(role([trust("rds.amazonaws.com")]), {"uid": "arn:aws:iam::111111111111:role/aws-service-role/rds.amazonaws.com/AWSServiceRoleForRDS"})
	keys(json.remove(linked, ["attributes/service_linked"])) == set()
}

test_accounts_and_other_actions_pass if {
	keys(role([{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "sts:AssumeRole"}])) == set()
	keys(role([{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:TagSession"}])) == set()
	keys(role([{"Effect": "Deny", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}])) == set()
}

test_china_and_wildcard_actions if {
	keys(role([{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com.cn"}, "Action": "sts:*"}])) == set()
	keys(role([{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:*"}])) == {"ec2.amazonaws.com"}
}
