# METADATA
# title: Unattached customer policy allows every action on every resource
# description: >-
#   A customer-managed policy attached to nothing that allows "*" on "*" without a
#   condition grants nothing today, but attaching it to any user, group or role (one
#   iam:Attach*Policy call) makes a full administrator, and it is easily mistaken for a
#   reviewed policy. A condition is no exemption (WARDEN-AWS-IAM-039): a policy allowing "*"
#   on "*" only under one is reported too, naming it. No fix is automated: the policy is not in effect, and whether to delete
#   it (with its versions) or narrow it is for its owner to decide.
# custom:
#   id: WARDEN-AWS-IAM-017
#   severity: medium
#   resource_types: [aws.iam.policy]
#   frameworks: {}
#   prowler: [iam_customer_unattached_policy_no_administrative_privileges]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.unattached_full_admin

import data.warden.lib.display
import data.warden.lib.iam

# Attached policies are WARDEN-AWS-IAM-001's (iam.granting_documents reads only those).
deny contains violation if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count == 0
	not input.resource.attributes.aws_managed
	doc := input.resource.attributes.document
	may_grant_everything(doc)
	iam.allows_everything(doc)
	violation := {"msg": sprintf("policy %s is attached to nothing but allows every action on every resource: attaching it anywhere makes a full administrator", [display.name])}
}

deny contains violation if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count == 0
	not input.resource.attributes.aws_managed
	doc := input.resource.attributes.document
	may_grant_conditionally(doc)
	iam.allows_everything_conditionally(doc)
	violation := {
		"msg": sprintf(
			"policy %s is attached to nothing but allows every action on every resource under a condition (%s): attaching it anywhere makes every session that meets it a full administrator",
			[display.name, concat(", ", iam.condition_keys(doc))],
		),
		"conditions": iam.condition_keys(doc),
	}
}

# may_grant_conditionally(doc) holds when doc has a conditional Allow that may apply to
# every resource.
may_grant_conditionally(doc) if {
	some s in iam.statements(doc)
	s.Effect == "Allow"
	iam.conditional_grant(s)
}

# may_grant_everything(doc) holds when doc has an unconditional Allow that may apply to every
# resource (iam.may_cover_all): the cheap test before the document is read in full.
may_grant_everything(doc) if {
	some s in iam.statements(doc)
	s.Effect == "Allow"
	iam.may_cover_all(s)
	not iam.has_condition(s)
}
