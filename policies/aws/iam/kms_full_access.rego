# METADATA
# title: Policy allows every KMS action on every resource
# description: >-
#   kms:* on every resource lets the holder decrypt with every key, change any key's policy
#   to give the key away, or schedule the keys' deletion and so destroy every piece of data
#   they encrypt. Reported for managed policies in effect and inline policies, like
#   WARDEN-AWS-IAM-002 and -018, with the same fix. A document that allows every action is
#   reported by WARDEN-AWS-IAM-001 alone, which carries this policy's controls.
# custom:
#   id: WARDEN-AWS-IAM-038
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(1)", "SC-12"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_policy_no_full_access_to_kms, iam_inline_policy_no_full_access_to_kms]
#   remediation: {action: aws.iam.detach_policy, risk: high, params: [inline_policy]}
package warden.aws.iam.kms_full_access

import data.warden.lib.iam

# The generic KMS action (iam.allows_all_actions_of_service), by service.
generic_actions := {"kms": ["kms:#"]}

deny contains violation if {
	some d in iam.granting_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	"kms:#" in iam.document_allowed(d, generic_actions)
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows every kms action (kms:*) on every resource, which lets its holder decrypt with, give away or delete every key", [iam.where(src)])},
		iam.violation_fields(src, "kms"),
	])
}
