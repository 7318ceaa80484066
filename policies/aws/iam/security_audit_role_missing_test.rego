package warden.aws.iam.security_audit_role_missing_test

import data.warden.aws.iam.security_audit_role_missing

account(attrs) := {"resource": {
	"uid": "arn:aws:iam::222222222222:account",
	"type": "aws.iam.account",
	"name": "acme-staging",
	"account": "222222222222",
	"region": "global",
	"attributes": object.union({"support_roles": ["support-tools"], "security_audit_roles": [], "alias": "acme-staging"}, attrs),
}}

test_no_security_audit_role if {
	security_audit_role_missing.deny == {{"msg": "account 222222222222 has no IAM role with the SecurityAudit policy attached"}} with input as account({})
}

test_security_audit_role_is_a_near_miss if {
	count(security_audit_role_missing.deny) == 0 with input as account({"security_audit_roles": ["security-audit"]})
}

test_unknown_roles_are_not_judged if {
	count(security_audit_role_missing.deny) == 0 with input as json.remove(account({}), ["resource/attributes/security_audit_roles"])
}

# --- messages never decide a violation -------------------------------------------

test_account_without_id_still_violates if {
	security_audit_role_missing.deny == {{"msg": "account arn:aws:iam::222222222222:account has no IAM role with the SecurityAudit policy attached"}} with input as json.remove(account({}), ["resource/account", "resource/name"])
}
