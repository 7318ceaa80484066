package warden.aws.iam.saml_provider_missing_test

import data.warden.aws.iam.saml_provider_missing

account(attrs) := {"resource": {
	"uid": "arn:aws:iam::222222222222:account",
	"type": "aws.iam.account",
	"name": "acme-staging",
	"account": "222222222222",
	"region": "global",
	"attributes": object.union({"support_roles": [], "security_audit_roles": [], "saml_providers": [], "alias": "acme-staging"}, attrs),
}}

test_no_saml_provider if {
	saml_provider_missing.deny == {{"msg": "account 222222222222 has no SAML identity provider: nobody signs in to it through federation"}} with input as account({})
}

test_identity_center_provider_is_a_near_miss if {
	count(saml_provider_missing.deny) == 0 with input as account({"saml_providers": ["arn:aws:iam::222222222222:saml-provider/AWSSSO_5f0c4a7e2d9b1c3a_DO_NOT_DELETE"]})
}

# Absent: ListSAMLProviders failed; an unread list is not an empty one.
test_unknown_providers_are_not_judged if {
	count(saml_provider_missing.deny) == 0 with input as json.remove(account({}), ["resource/attributes/saml_providers"])
}

# --- messages never decide a violation -------------------------------------------

test_account_without_id_still_violates if {
	count(saml_provider_missing.deny) == 1 with input as json.remove(account({}), ["resource/account", "resource/name"])
}
