# METADATA
# title: Policy allows every action of IAM, STS or Organizations
# description: >-
#   Every action of iam, sts or organizations on every resource lets the holder grant itself
#   any permission, assume any role, or reshape the organization. iam:* holds every
#   privilege-escalation path of WARDEN-AWS-IAM-003 and sts:* the role assumption of
#   WARDEN-AWS-IAM-020: those stay silent on the document, and this finding carries their
#   controls and Prowler checks. kms:* is WARDEN-AWS-IAM-038's, cloudtrail:*
#   WARDEN-AWS-IAM-018's.
# custom:
#   id: WARDEN-AWS-IAM-002
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(1)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_policy_allows_privilege_escalation, iam_inline_policy_allows_privilege_escalation, iam_no_custom_policy_permissive_role_assumption]
#   remediation: {action: aws.iam.detach_policy, risk: high, params: [inline_policy]}
package warden.aws.iam.service_admin

import data.warden.lib.iam

services := ["iam", "sts", "organizations"]

# The generic actions of the services (iam.allows_all_actions_of_service), by service.
generic_actions := {"iam": ["iam:#"], "sts": ["sts:#"], "organizations": ["organizations:#"]}

deny contains violation if {
	some d in iam.granting_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	allowed := iam.document_allowed(d, generic_actions)
	some svc in services
	concat(":", [svc, "#"]) in allowed
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows every %s action (%s:*) on every resource", [iam.where(src), svc, svc])},
		iam.violation_fields(src, svc),
	])
}
