package warden.aws.iam.public_trust_test

import data.warden.aws.iam.public_trust

role(statements) := {
	"uid": "arn:aws:iam::111111111111:role/partner-data-share",
	"type": "aws.iam.role",
	"name": "partner-data-share",
	"account": "111111111111",
	"attributes": {"assume_role_policy": {"Version": "2012-10-17", "Statement": statements}},
}

keys(statements) := ks if {
	ks := {v.key | some v in public_trust.deny} with input as {"resource": role(statements)}
}

test_aws_star_violates if {
	[v] := [v | some v in public_trust.deny] with input as {"resource": role([{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}])}
	v.key == "*"
	v.msg == "role partner-data-share can be assumed by anyone through * (sts:AssumeRole) without a condition"
}

test_principal_star_single_statement_violates if {
	r := object.union(role([]), {"attributes": {"assume_role_policy": {"Statement": {"Effect": "Allow", "Principal": "*", "Action": ["sts:AssumeRole", "sts:TagSession"]}}}})
	{v.key | some v in public_trust.deny} == {"*"} with input as {"resource": r}
}

test_star_among_accounts_violates if {
	keys([{"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::222222222222:root", "*"]}, "Action": "sts:AssumeRole"}]) == {"*"}
}

test_github_oidc_without_condition_violates if {
	provider := "arn:aws:iam::111111111111:oidc-provider/token.actions.githubusercontent.com"
	keys([{"Effect": "Allow", "Principal": {"Federated": provider}, "Action": "sts:AssumeRoleWithWebIdentity"}]) == {provider}
}

test_org_condition_passes if {
	keys([{
		"Effect": "Allow",
		"Principal": {"AWS": "*"},
		"Action": "sts:AssumeRole",
		"Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-acme1234"}},
	}]) == set()
}

test_github_oidc_with_sub_condition_passes if {
	keys([{
		"Effect": "Allow",
		"Principal": {"Federated": "arn:aws:iam::111111111111:oidc-provider/token.actions.githubusercontent.com"},
		"Action": "sts:AssumeRoleWithWebIdentity",
		"Condition": {
			"StringEquals": {"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"},
			"StringLike": {"token.actions.githubusercontent.com:sub": "repo:acme/orders:ref:refs/heads/main"},
		},
	}]) == set()
}

test_account_and_service_principals_pass if {
	keys([
		{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::333333333333:root"}, "Action": "sts:AssumeRole"},
		{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"},
	]) == set()
}

test_deny_to_all_but_own_account_overrides if {
	keys([
		{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole"},
		{"Effect": "Deny", "NotPrincipal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "sts:AssumeRole"},
	]) == set()
}

test_conditional_deny_does_not_override if {
	keys([
		{"Effect": "Allow", "Principal": "*", "Action": "sts:AssumeRole"},
		{"Effect": "Deny", "Principal": "*", "Action": "sts:AssumeRole", "Condition": {"StringNotEquals": {"aws:PrincipalOrgID": "o-acme1234"}}},
	]) == {"*"}
}

test_not_an_assume_action_passes if {
	keys([{"Effect": "Allow", "Principal": "*", "Action": "sts:TagSession"}]) == set()
}

# --- messages never decide a violation -------------------------------------------

test_role_without_name_still_violates if {
	r := object.remove(role([{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]), ["name"])
	[v] := [v | some v in public_trust.deny] with input as {"resource": r}
	v.msg == "role arn:aws:iam::111111111111:role/partner-data-share can be assumed by anyone through * (sts:AssumeRole) without a condition"
}
