# METADATA
# title: Policy allows every CloudTrail action on every resource
# description: >-
#   cloudtrail:* on every resource lets the holder stop logging, delete trails and event
#   data stores, or send the events elsewhere: the first thing an intruder does to hide.
#   Reported for managed policies in effect and inline policies, like WARDEN-AWS-IAM-002,
#   with the same fix.
# custom:
#   id: WARDEN-AWS-IAM-018
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AU-9"]}
#   prowler: [iam_policy_no_full_access_to_cloudtrail, iam_inline_policy_no_full_access_to_cloudtrail]
#   remediation: {action: aws.iam.detach_policy, risk: high, params: [inline_policy]}
package warden.aws.iam.cloudtrail_full_access

import data.warden.lib.iam

# The generic CloudTrail action (iam.allows_all_actions_of_service), by service.
generic_actions := {"cloudtrail": ["cloudtrail:#"]}

deny contains violation if {
	some d in iam.granting_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	"cloudtrail:#" in iam.document_allowed(d, generic_actions)
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows every cloudtrail action (cloudtrail:*) on every resource, which lets its holder stop, delete or redirect the audit trails", [iam.where(src)])},
		iam.violation_fields(src, "cloudtrail"),
	])
}
