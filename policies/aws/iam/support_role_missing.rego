# METADATA
# title: No role can manage AWS Support cases
# description: When an incident needs AWS Support, someone must be able to open and follow cases; without a role carrying the AWSSupportAccess managed policy that someone is the root user or an administrator. No fix is automated, as who may assume the support role (its trust policy) is for the account's owners to decide.
# custom:
#   id: WARDEN-AWS-IAM-031
#   severity: low
#   resource_types: [aws.iam.account]
#   frameworks: {cis-aws-3.0: ["1.17"]}
#   prowler: [iam_support_role_created]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.support_role_missing

import data.warden.lib.display

deny contains violation if {
	input.resource.attributes.support_roles == []
	violation := {"msg": sprintf("account %s has no IAM role with the AWSSupportAccess policy attached", [display.account])}
}
