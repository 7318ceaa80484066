# METADATA
# title: Policy allows a privilege-escalation action on every resource
# description: Actions such as iam:CreatePolicyVersion, iam:AttachRolePolicy or iam:PassRole with a compute service let the holder grant itself more than the policy gives, up to full administrator.
# custom:
#   id: WARDEN-AWS-IAM-003
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(1)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.privilege_escalation

import data.warden.lib.iam

# Each of these alone lets the holder widen its own (or another principal's) permissions.
escalation_actions := [
	"iam:CreatePolicyVersion",
	"iam:SetDefaultPolicyVersion",
	"iam:AttachUserPolicy",
	"iam:AttachGroupPolicy",
	"iam:AttachRolePolicy",
	"iam:PutUserPolicy",
	"iam:PutGroupPolicy",
	"iam:PutRolePolicy",
	"iam:CreateAccessKey",
	"iam:CreateLoginProfile",
	"iam:UpdateLoginProfile",
	"iam:UpdateAssumeRolePolicy",
	"iam:AddUserToGroup",
]

# iam:PassRole escalates when the holder can also start compute that runs as the passed role.
compute_actions := [
	"ec2:RunInstances",
	"lambda:CreateFunction",
	"lambda:UpdateFunctionConfiguration",
	"ecs:RunTask",
	"ecs:RegisterTaskDefinition",
	"glue:CreateDevEndpoint",
	"glue:UpdateDevEndpoint",
	"cloudformation:CreateStack",
	"datapipeline:CreatePipeline",
	"sagemaker:CreateNotebookInstance",
	"codebuild:CreateProject",
]

# Documents that allow every IAM action are reported by WARDEN-AWS-IAM-001 or -002.
escalating_documents contains src if {
	some src in iam.documents(input.resource)
	not iam.allows_all_actions_of_service(src.document, "iam")
}

deny contains violation if {
	some src in escalating_documents
	some action in escalation_actions
	iam.allows_action_on_all_resources(src.document, action)
	violation := object.union(
		{"msg": sprintf("%s allows %s on every resource, which lets its holder escalate its privileges", [src.where, action])},
		iam.violation_fields(src, action),
	)
}

deny contains violation if {
	some src in escalating_documents
	iam.allows_action_on_all_resources(src.document, "iam:PassRole")
	launches := [action | some action in compute_actions; iam.allows_action(src.document, action)]
	count(launches) > 0
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows iam:PassRole on every role together with %s, which lets its holder run code as any role",
				[src.where, concat(", ", launches)],
			),
			"compute_actions": launches,
		},
		iam.violation_fields(src, "iam:PassRole"),
	])
}
