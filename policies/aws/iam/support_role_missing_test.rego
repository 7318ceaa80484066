package warden.aws.iam.support_role_missing_test

import data.warden.aws.iam.support_role_missing

account(attrs) := {"resource": {
	"uid": "arn:aws:iam::111111111111:account",
	"type": "aws.iam.account",
	"name": "acme-prod",
	"account": "111111111111",
	"region": "global",
	"attributes": object.union({"support_roles": [], "security_audit_roles": ["security-audit"], "alias": "acme-prod"}, attrs),
}}

test_no_support_role if {
	support_role_missing.deny == {{"msg": "account 111111111111 has no IAM role with the AWSSupportAccess policy attached"}} with input as account({})
}

test_support_role_is_a_near_miss if {
	count(support_role_missing.deny) == 0 with input as account({"support_roles": ["incident-responder"]})
}

test_unknown_roles_are_not_judged if {
	count(support_role_missing.deny) == 0 with input as json.remove(account({}), ["resource/attributes/support_roles"])
}

# --- messages never decide a violation -------------------------------------------

test_account_without_id_still_violates if {
	support_role_missing.deny == {{"msg": "account arn:aws:iam::111111111111:account has no IAM role with the AWSSupportAccess policy attached"}} with input as json.remove(account({}), ["resource/account", "resource/name"])
}
