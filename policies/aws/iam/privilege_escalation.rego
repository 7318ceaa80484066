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

# The actions asked about, lower-cased and by service (iam.one_action): iam:# (every IAM
# action, reported by WARDEN-AWS-IAM-001 or -002), the escalation actions and iam:PassRole.
iam_actions := {"iam": [
	"iam:#",
	"iam:createpolicyversion",
	"iam:setdefaultpolicyversion",
	"iam:attachuserpolicy",
	"iam:attachgrouppolicy",
	"iam:attachrolepolicy",
	"iam:putuserpolicy",
	"iam:putgrouppolicy",
	"iam:putrolepolicy",
	"iam:createaccesskey",
	"iam:createloginprofile",
	"iam:updateloginprofile",
	"iam:updateassumerolepolicy",
	"iam:addusertogroup",
	"iam:passrole",
]}

# compute_actions, lower-cased and by service.
compute_by_service := {
	"ec2": ["ec2:runinstances"],
	"lambda": ["lambda:createfunction", "lambda:updatefunctionconfiguration"],
	"ecs": ["ecs:runtask", "ecs:registertaskdefinition"],
	"glue": ["glue:createdevendpoint", "glue:updatedevendpoint"],
	"cloudformation": ["cloudformation:createstack"],
	"datapipeline": ["datapipeline:createpipeline"],
	"sagemaker": ["sagemaker:createnotebookinstance"],
	"codebuild": ["codebuild:createproject"],
}

# escalating_documents[d] is the set of the iam_actions that document d of input.resource
# allows on every resource, for the documents that can allow an action on every resource
# but not every IAM action.
escalating_documents[d] := allowed if {
	some d in iam.granting_documents
	allowed := iam.document_allowed(d, iam_actions)
	not "iam:#" in allowed
}

# escalation_names maps each escalation action, lower-cased, to its name.
escalation_names := {
	"iam:createpolicyversion": "iam:CreatePolicyVersion",
	"iam:setdefaultpolicyversion": "iam:SetDefaultPolicyVersion",
	"iam:attachuserpolicy": "iam:AttachUserPolicy",
	"iam:attachgrouppolicy": "iam:AttachGroupPolicy",
	"iam:attachrolepolicy": "iam:AttachRolePolicy",
	"iam:putuserpolicy": "iam:PutUserPolicy",
	"iam:putgrouppolicy": "iam:PutGroupPolicy",
	"iam:putrolepolicy": "iam:PutRolePolicy",
	"iam:createaccesskey": "iam:CreateAccessKey",
	"iam:createloginprofile": "iam:CreateLoginProfile",
	"iam:updateloginprofile": "iam:UpdateLoginProfile",
	"iam:updateassumerolepolicy": "iam:UpdateAssumeRolePolicy",
	"iam:addusertogroup": "iam:AddUserToGroup",
}

# compute_names is compute_actions as [name, lower-cased name].
compute_names := [
	["ec2:RunInstances", "ec2:runinstances"],
	["lambda:CreateFunction", "lambda:createfunction"],
	["lambda:UpdateFunctionConfiguration", "lambda:updatefunctionconfiguration"],
	["ecs:RunTask", "ecs:runtask"],
	["ecs:RegisterTaskDefinition", "ecs:registertaskdefinition"],
	["glue:CreateDevEndpoint", "glue:createdevendpoint"],
	["glue:UpdateDevEndpoint", "glue:updatedevendpoint"],
	["cloudformation:CreateStack", "cloudformation:createstack"],
	["datapipeline:CreatePipeline", "datapipeline:createpipeline"],
	["sagemaker:CreateNotebookInstance", "sagemaker:createnotebookinstance"],
	["codebuild:CreateProject", "codebuild:createproject"],
]

deny contains violation if {
	some d in iam.granting_documents
	allowed := escalating_documents[d]
	some lower_action in allowed
	action := escalation_names[lower_action]
	src := iam.resource_sources[d]
	violation := object.union(
		{"msg": sprintf("%s allows %s on every resource, which lets its holder escalate its privileges", [iam.where(src), action])},
		iam.violation_fields(src, action),
	)
}

deny contains violation if {
	some d in iam.granting_documents
	allowed := escalating_documents[d]
	"iam:passrole" in allowed
	somewhere := iam.document_allowed_somewhere(d, compute_by_service)
	launches := [action | some [action, lower_action] in compute_names; lower_action in somewhere]
	count(launches) > 0
	src := iam.resource_sources[d]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows iam:PassRole on every role together with %s, which lets its holder run code as any role",
				[iam.where(src), concat(", ", launches)],
			),
			"compute_actions": launches,
		},
		iam.violation_fields(src, "iam:PassRole"),
	])
}
