package warden.aws.iam.unknown_account_trust_test

import data.warden.aws.iam.unknown_account_trust

role(statements) := {
	"uid": "arn:aws:iam::111111111111:role/vendor-integration",
	"type": "aws.iam.role",
	"name": "vendor-integration",
	"account": "111111111111",
	"attributes": {"assume_role_policy": {"Version": "2012-10-17", "Statement": statements}},
}

trust(principal) := {"Effect": "Allow", "Principal": {"AWS": principal}, "Action": "sts:AssumeRole"}

keys(statements) := ks if {
	ks := {v.key | some v in unknown_account_trust.deny} with input as {"resource": role(statements)}
}

test_outside_account_violates if {
	[v] := [v | some v in unknown_account_trust.deny] with input as {"resource": role([object.union(
		trust("arn:aws:iam::464622532012:root"),
		{"Condition": {"StringEquals": {"sts:ExternalId": "3f0c9a"}}},
	)])}
	v.key == "464622532012"
	v.msg == "role vendor-integration trusts account 464622532012 (arn:aws:iam::464622532012:root), which is not a known account"
}

test_own_account_passes if {
	keys([trust(["arn:aws:iam::111111111111:root", "111111111111", "arn:aws:iam::111111111111:role/ci"])]) == set()
}

test_other_org_account_without_setting_violates if {
	keys([trust("222222222222")]) == {"222222222222"}
}

test_known_accounts_setting if {
	keys([trust(["222222222222", "arn:aws:iam::333333333333:role/auditor"])]) == set() with data.warden.config as {"known_accounts": ["222222222222", "333333333333"]}
	keys([trust("arn:aws:iam::444444444444:root")]) == {"444444444444"} with data.warden.config as {"known_accounts": ["222222222222"]}
}

test_snapshot_accounts_are_known if {
	statements := [trust(["222222222222", "arn:aws:iam::333333333333:role/auditor", "arn:aws:iam::444444444444:root"])]
	snapshot := {"accounts": ["111111111111", "222222222222", "333333333333", "acme-prod-4821"], "collected_at": "2026-11-30T12:00:00Z"}
	ks := {v.key | some v in unknown_account_trust.deny} with input as {"resource": role(statements), "snapshot": snapshot}
	ks == {"444444444444"}
	keys(statements) == {"222222222222", "333333333333", "444444444444"}
}

test_known_account_as_number if {
	keys([trust("222222222222")]) == set() with data.warden.config as {"known_accounts": [222222222222]}
}

test_one_violation_per_account if {
	vs := unknown_account_trust.deny with input as {"resource": role([
		trust(["arn:aws:iam::999999999999:root", "arn:aws:iam::999999999999:role/deployer"]),
		trust("888888888888"),
	])}
	{v.key | some v in vs} == {"999999999999", "888888888888"}
	count(vs) == 2
}

test_services_and_public_principals_are_not_accounts if {
	keys([
		{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"},
		{"Effect": "Allow", "Principal": {"AWS": "AROA5EVAXCERJ57GD5PLO"}, "Action": "sts:AssumeRole"},
		trust("*"),
	]) == set()
}

test_deny_statement_is_not_trust if {
	keys([{"Effect": "Deny", "Principal": {"AWS": "999999999999"}, "Action": "sts:AssumeRole"}]) == set()
}

# --- messages never decide a violation -------------------------------------------

test_role_without_name_or_account_still_violates if {
	r := object.remove(role([trust("arn:aws:iam::464622532012:root")]), ["name", "account"])
	[v] := [v | some v in unknown_account_trust.deny] with input as {"resource": r}
	v.msg == "role arn:aws:iam::111111111111:role/vendor-integration trusts account 464622532012 (arn:aws:iam::464622532012:root), which is not a known account"
}
