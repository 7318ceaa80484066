package warden.aws.iam.cross_account_readonly_test

import data.warden.aws.iam.cross_account_readonly

role(principal, policies) := {
	"uid": "arn:aws:iam::111111111111:role/external-auditor",
	"type": "aws.iam.role",
	"name": "external-auditor",
	"account": "111111111111",
	"attributes": {
		"assume_role_policy": {"Statement": [{"Effect": "Allow", "Principal": {"AWS": principal}, "Action": "sts:AssumeRole", "Condition": {"StringEquals": {"sts:ExternalId": "a1b2"}}}]},
		"attached_policies": [{"arn": sprintf("arn:aws:iam::aws:policy/%s", [p]), "name": p} | some p in policies],
	},
}

keys(resource) := ks if {
	ks := {v.key | some v in cross_account_readonly.deny} with input as {"resource": resource}
}

test_unknown_account_with_read_only_violates if {
	[v] := [v | some v in cross_account_readonly.deny] with input as {"resource": role("arn:aws:iam::210987654321:root", ["ReadOnlyAccess"])}
	v.key == "210987654321"
	v.msg == "role external-auditor has ReadOnlyAccess and trusts account 210987654321 (arn:aws:iam::210987654321:root), which is not a known account: that account can read the whole account"
}

test_each_unknown_account_violates if {
	keys(role(["210987654321", "arn:aws:iam::464622532012:role/x", "arn:aws:iam::111111111111:root"], ["SecurityAudit", "ReadOnlyAccess"])) == {"210987654321", "464622532012"}
}

test_known_account_passes if {
	keys(role("arn:aws:iam::111111111111:root", ["ReadOnlyAccess"])) == set()
	keys(role("arn:aws:iam::333333333333:root", ["ReadOnlyAccess"])) == set() with data.warden.config as {"known_accounts": ["333333333333"]}
	ks := {v.key | some v in cross_account_readonly.deny} with input as {"resource": role("333333333333", ["ReadOnlyAccess"]), "snapshot": {"accounts": ["111111111111", "333333333333"]}}
	ks == set()
}

test_other_policies_pass if {
	keys(role("arn:aws:iam::210987654321:root", ["SecurityAudit", "ViewOnlyAccess"])) == set()
	keys(role("arn:aws:iam::210987654321:root", [])) == set()
}

test_customer_policy_named_read_only_passes if {
	r := json.patch(role("210987654321", []), [{"op": "add", "path": "/attributes/attached_policies/-", "value": {"arn": "arn:aws:iam::111111111111:policy/ReadOnlyAccess", "name": "ReadOnlyAccess"}}])
	keys(r) == set()
}
