# METADATA
# title: Policy allows AWS Marketplace subscriptions on every resource
# description: >-
#   aws-marketplace:Subscribe on every resource lets the holder subscribe the account to
#   any Marketplace product, with its charges and its software running in the account.
#   Scope the action to the approved products or add a condition. Where IAM's
#   last-accessed data shows the holder never used Marketplace in the window (setting
#   unused_access_window_days), the finding offers the right-sizing fix (high risk), which
#   takes the service out of the document; otherwise nothing is automated, since detaching
#   the whole policy for one action would take away everything else it grants.
# custom:
#   id: WARDEN-AWS-IAM-019
#   severity: medium
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6"]}
#   prowler: [iam_policy_no_wildcard_marketplace_subscribe, iam_inline_policy_no_wildcard_marketplace_subscribe]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.marketplace_subscribe

import data.warden.lib.iam
import data.warden.lib.usage

subscribe := {"aws-marketplace": ["aws-marketplace:subscribe"]}

deny contains violation if {
	some d in iam.granting_documents
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	"aws-marketplace:subscribe" in iam.document_allowed(d, subscribe)
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows aws-marketplace:Subscribe on every resource, which lets its holder subscribe the account to any Marketplace product", [iam.where(src)])},
		iam.violation_fields(src, "aws-marketplace:Subscribe"),
		usage.rightsizing(src.document, {"aws-marketplace"}),
	])
}
