# METADATA
# title: Policy allows administrator access under a condition
# description: >-
#   A condition is not an exemption: "*" on "*" allowed only with aws:MultiFactorAuthPresent
#   (or a source IP, a tag, a time) makes every session that meets the condition a full
#   administrator, and the same holds for every action of IAM, STS, Organizations, KMS or
#   CloudTrail. The grants WARDEN-AWS-IAM-001, -002, -018 and -038 report, made under a
#   condition, are reported here, naming the condition, one severity lower than full admin
#   without one. No fix is automated: the condition is the control the policy's owner chose,
#   and whether it is enough (MFA for a break-glass role) or the grant should be narrowed is
#   theirs to decide.
# custom:
#   id: WARDEN-AWS-IAM-039
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {cis-aws-3.0: ["1.16"], nist-800-53-r5: ["AC-6", "AC-6(1)", "AU-9", "SC-12"], pci-dss-4.0: ["7.2.1", "7.2.2"], soc2: ["CC6.1", "CC6.3"], iso-27001-2022: ["A.5.15", "A.8.2"]}
#   prowler: [iam_aws_attached_policy_no_administrative_privileges, iam_customer_attached_policy_no_administrative_privileges, iam_inline_policy_no_administrative_privileges, iam_policy_no_full_access_to_kms, iam_inline_policy_no_full_access_to_kms, iam_policy_no_full_access_to_cloudtrail, iam_inline_policy_no_full_access_to_cloudtrail, iam_policy_no_wildcard_marketplace_subscribe, iam_inline_policy_no_wildcard_marketplace_subscribe, iam_no_custom_policy_permissive_role_assumption, iam_policy_allows_privilege_escalation, iam_inline_policy_allows_privilege_escalation]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.conditional_admin

import data.warden.lib.iam

# The services whose every action is administrator access (WARDEN-AWS-IAM-002, -018, -038).
services := ["iam", "sts", "organizations", "kms", "cloudtrail"]

# Their generic actions, by service (iam.conditionally_allowed).
generic_actions := {svc: [concat(":", [svc, "#"])] | some svc in services}

deny contains violation if {
	some d in iam.conditionally_everything_documents
	src := iam.resource_sources[d]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows every action on every resource under a condition (%s): every session that meets it is a full administrator",
				[iam.where(src), concat(", ", iam.condition_keys(src.document))],
			),
			"conditions": iam.condition_keys(src.document),
		},
		iam.violation_fields(src, "*"),
	])
}

deny contains violation if {
	some d in iam.conditional_documents
	not d in iam.conditionally_everything_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	allowed := iam.conditionally_allowed(d, generic_actions)
	some svc in services
	concat(":", [svc, "#"]) in allowed
	src := iam.resource_sources[d]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows every %s action (%s:*) on every resource under a condition (%s)",
				[iam.where(src), svc, svc, concat(", ", iam.condition_keys(src.document))],
			),
			"conditions": iam.condition_keys(src.document),
		},
		iam.violation_fields(src, svc),
	])
}
