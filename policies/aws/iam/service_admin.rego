# METADATA
# title: Policy allows every action of IAM, STS, KMS or Organizations
# description: Every action of iam, sts, kms or organizations on every resource lets the holder grant itself any permission, assume any role, read or destroy any key, or reshape the organization.
# custom:
#   id: WARDEN-AWS-IAM-002
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(1)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_policy_no_full_access_to_kms, iam_inline_policy_no_full_access_to_kms]
#   remediation: {action: aws.iam.detach_policy, risk: high, params: [inline_policy]}
package warden.aws.iam.service_admin

import data.warden.lib.iam

services := ["iam", "sts", "kms", "organizations"]

# The generic actions of the services (iam.allows_all_actions_of_service), by service.
generic_actions := {"iam": ["iam:#"], "sts": ["sts:#"], "kms": ["kms:#"], "organizations": ["organizations:#"]}

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
