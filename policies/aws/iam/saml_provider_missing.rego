# METADATA
# title: Account has no SAML identity provider
# description: Federating sign-in from a central identity provider (IAM Identity Center, which creates a SAML provider in every account it manages, or an enterprise IdP over SAML) keeps joiners and leavers, MFA and password rules in one place instead of an IAM user per person per account. An account reached only through roles from another account has no provider either; waive the finding there. No fix is automated, as federation needs the identity provider's metadata and roles mapped to its groups.
# custom:
#   id: WARDEN-AWS-IAM-033
#   severity: low
#   resource_types: [aws.iam.account]
#   prowler: [iam_check_saml_providers_sts]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.saml_provider_missing

import data.warden.lib.display

# saml_providers is absent when the providers could not be listed: unknown, not judged.
deny contains violation if {
	input.resource.attributes.saml_providers == []
	violation := {"msg": sprintf("account %s has no SAML identity provider: nobody signs in to it through federation", [display.account])}
}
