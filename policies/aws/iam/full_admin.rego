# METADATA
# title: Policy allows every action on every resource
# description: >-
#   A policy in effect that allows "*" on "*" without a condition makes whoever holds it a
#   full administrator of the account, able to undo every other control. The
#   AdministratorAccess managed policy is reported once, naming the users, groups and roles
#   it is attached to, and the fix detaches it from each. Every action holds what the
#   narrower policies look for (every action of IAM, STS, Organizations, KMS and CloudTrail,
#   Marketplace subscriptions, role assumption, privilege escalation, NotAction grants):
#   they stay silent on such a document, and this finding carries their controls and
#   Prowler checks, so that a report filtered by any of them lists it.
# custom:
#   id: WARDEN-AWS-IAM-001
#   severity: critical
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {cis-aws-3.0: ["1.16"], nist-800-53-r5: ["AC-6", "AC-6(1)", "AU-9", "SC-12"], pci-dss-4.0: ["7.2.1", "7.2.2"], soc2: ["CC6.1", "CC6.3"], iso-27001-2022: ["A.5.15", "A.8.2"]}
#   prowler: [iam_aws_attached_policy_no_administrative_privileges, iam_customer_attached_policy_no_administrative_privileges, iam_inline_policy_no_administrative_privileges, iam_user_administrator_access_policy, iam_group_administrator_access_policy, iam_role_administratoraccess_policy, iam_policy_no_full_access_to_kms, iam_inline_policy_no_full_access_to_kms, iam_policy_no_full_access_to_cloudtrail, iam_inline_policy_no_full_access_to_cloudtrail, iam_policy_no_wildcard_marketplace_subscribe, iam_inline_policy_no_wildcard_marketplace_subscribe, iam_no_custom_policy_permissive_role_assumption, iam_policy_allows_privilege_escalation, iam_inline_policy_allows_privilege_escalation]
#   remediation: {action: aws.iam.detach_policy, risk: high, params: [inline_policy]}
package warden.aws.iam.full_admin

import data.warden.lib.iam

deny contains violation if {
	some d in iam.granting_documents
	d in iam.everything_documents
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows every action on every resource", [iam.where(src)])},
		iam.violation_fields(src, ""),
	])
}
