# METADATA
# title: Custom policy allows assuming every role
# description: >-
#   A customer-managed or inline policy allowing sts:AssumeRole on every role lets the
#   holder assume any role whose trust policy trusts its account, in its account or
#   another: every such role's permissions become the holder's. Name the roles it needs
#   in Resource. Where IAM's last-accessed data shows the holder never used STS in the
#   window (setting unused_access_window_days), the finding offers the right-sizing fix
#   (high risk), which takes STS out of the document; otherwise no fix is automated,
#   since which roles the holder needs is for the policy's owner to decide.
# custom:
#   id: WARDEN-AWS-IAM-020
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6"]}
#   prowler: [iam_no_custom_policy_permissive_role_assumption]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.permissive_role_assumption

import data.warden.lib.iam
import data.warden.lib.usage

# sts:# is every STS action (WARDEN-AWS-IAM-002 reports it), sts:assumerole the one asked.
assume := {"sts": ["sts:#", "sts:assumerole"]}

deny contains violation if {
	not input.resource.attributes.aws_managed
	some d in iam.granting_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	allowed := iam.document_allowed(d, assume)
	"sts:assumerole" in allowed
	not "sts:#" in allowed
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows sts:AssumeRole on every role, which lets its holder assume any role that trusts its account", [iam.where(src)])},
		iam.violation_fields(src, "sts:AssumeRole"),
		usage.rightsizing(src.document, {"sts"}),
	])
}
