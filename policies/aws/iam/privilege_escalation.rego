# METADATA
# title: Policy allows privilege escalation
# description: >-
#   A policy allows one of the published privilege-escalation paths (Rhino Security Labs'
#   list and Prowler's combinations, from pathfinding.cloud): an IAM action such as
#   iam:CreatePolicyVersion or iam:AttachRolePolicy on every resource, an action that runs
#   code as the role of an existing resource (lambda:UpdateFunctionCode, ssm:SendCommand…)
#   on every resource, or iam:PassRole on every role together with a service that starts
#   compute as the passed role. Each lets the holder grant itself more than the policy
#   gives, up to full administrator. Where IAM's last-accessed data shows that every path
#   found in a document goes through a service the holder did not use in the window
#   (setting unused_access_window_days), the finding offers the right-sizing fix (high
#   risk), which takes those services out; otherwise no fix is automated: which of the
#   actions the holder really needs, and on which resources, is for the policy's owner to
#   decide.
# custom:
#   id: WARDEN-AWS-IAM-003
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(1)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   prowler: [iam_policy_allows_privilege_escalation, iam_inline_policy_allows_privilege_escalation]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.privilege_escalation

import data.warden.lib.iam
import data.warden.lib.usage

# escalations are the IAM paths, each reported on its own: their actions must all be
# allowed on every resource (any user, group, role or policy). Each is listed once, without
# the longer paths that hold one (Prowler's iam:CreateAccessKey + iam:DeleteAccessKey is
# iam:CreateAccessKey). Left out as unpublished or second-order:
# iam:PutRolePermissionsBoundary, iam:DetachRolePolicy and iam:Delete*Policy (they remove
# a Deny or a boundary, and only re-enable what another policy allows).
escalations := [
	["iam:CreatePolicyVersion"],
	["iam:SetDefaultPolicyVersion"],
	["iam:AttachUserPolicy"],
	["iam:AttachGroupPolicy"],
	["iam:AttachRolePolicy"],
	["iam:PutUserPolicy"],
	["iam:PutGroupPolicy"],
	["iam:PutRolePolicy"],
	["iam:CreateAccessKey"],
	["iam:CreateLoginProfile"],
	["iam:UpdateLoginProfile"],
	["iam:UpdateAssumeRolePolicy"],
	["iam:AddUserToGroup"],
	["iam:DeleteUserPermissionsBoundary"],
	["iam:PutUserPermissionsBoundary"],
	["sts:AssumeRole", "iam:DeleteRolePermissionsBoundary"],
]

# existing_resource_escalations are the paths through the existing resources of a service
# that run as a role (a function, a dev endpoint, an instance, a stack…): allowed on every
# resource, they reach the permissions of every such role. Reported together, once per
# document.
existing_resource_escalations := [
	["ec2:ModifyInstanceAttribute", "ec2:StopInstances", "ec2:StartInstances"],
	["ec2:CreateLaunchTemplateVersion", "ec2:ModifyLaunchTemplate"],
	["ec2-instance-connect:SendSSHPublicKey", "ec2:DescribeInstances"],
	["lambda:UpdateFunctionCode"],
	["lambda:UpdateFunctionConfiguration"],
	["glue:UpdateDevEndpoint"],
	["cloudformation:UpdateStack"],
	["cloudformation:CreateChangeSet", "cloudformation:ExecuteChangeSet"],
	["codebuild:StartBuild"],
	["codebuild:StartBuildBatch"],
	["ecs:ExecuteCommand", "ecs:DescribeTasks"],
	["sagemaker:CreatePresignedNotebookInstanceUrl"],
	["sagemaker:CreateNotebookInstanceLifecycleConfig", "sagemaker:StopNotebookInstance", "sagemaker:UpdateNotebookInstance", "sagemaker:StartNotebookInstance"],
	["ssm:StartSession"],
	["ssm:SendCommand"],
	["apprunner:UpdateService"],
	["bedrock-agentcore:StartCodeInterpreterSession", "bedrock-agentcore:InvokeCodeInterpreter"],
	["bedrock-agentcore:InvokeAgentRuntimeCommand"],
	["bedrock-agentcore:StartBrowserSession", "bedrock-agentcore:ConnectBrowserAutomationStream"],
	["batch:SubmitJob"],
	["codedeploy:CreateDeployment", "codedeploy:RegisterApplicationRevision", "codedeploy:GetDeploymentConfig"],
	["states:UpdateStateMachine", "states:StartExecution"],
	["sso:AttachManagedPolicyToPermissionSet"],
	["sso:PutInlinePolicyToPermissionSet"],
]

# pass_role_escalations are the actions that, together with iam:PassRole on every role,
# create or change compute that runs as the passed role. The resource they create is the
# holder's own choice, so they need only be allowed somewhere.
pass_role_escalations := [
	["ec2:RunInstances"],
	["ec2:RequestSpotInstances"],
	["lambda:CreateFunction", "lambda:InvokeFunction"],
	["lambda:CreateFunction", "lambda:CreateEventSourceMapping"],
	["lambda:CreateFunction", "lambda:AddPermission"],
	["glue:CreateDevEndpoint"],
	["glue:CreateJob", "glue:StartJobRun"],
	["glue:CreateJob", "glue:CreateTrigger"],
	["glue:UpdateJob", "glue:StartJobRun"],
	["glue:UpdateJob", "glue:CreateTrigger"],
	["glue:CreateSession", "glue:RunStatement"],
	["cloudformation:CreateStack"],
	["cloudformation:CreateStackSet", "cloudformation:CreateStackInstances"],
	["cloudformation:UpdateStackSet"],
	["datapipeline:CreatePipeline", "datapipeline:PutPipelineDefinition", "datapipeline:ActivatePipeline"],
	["codestar:CreateProject"],
	["codebuild:CreateProject", "codebuild:StartBuild"],
	["codebuild:CreateProject", "codebuild:StartBuildBatch"],
	["autoscaling:CreateAutoScalingGroup", "autoscaling:CreateLaunchConfiguration"],
	["autoscaling:UpdateAutoScalingGroup", "autoscaling:CreateLaunchConfiguration"],
	["ecs:RegisterTaskDefinition", "ecs:CreateService"],
	["ecs:RunTask"],
	["ecs:StartTask"],
	["sagemaker:CreateNotebookInstance"],
	["sagemaker:CreateTrainingJob"],
	["sagemaker:CreateProcessingJob"],
	["apprunner:CreateService"],
	["bedrock-agentcore:CreateCodeInterpreter", "bedrock-agentcore:StartCodeInterpreterSession", "bedrock-agentcore:InvokeCodeInterpreter"],
	["bedrock-agentcore:CreateAgentRuntime", "bedrock-agentcore:CreateAgentRuntimeEndpoint", "bedrock-agentcore:CreateWorkloadIdentity", "bedrock-agentcore:InvokeAgentRuntimeCommand"],
	["bedrock-agentcore:CreateBrowser", "bedrock-agentcore:StartBrowserSession", "bedrock-agentcore:ConnectBrowserAutomationStream"],
	["batch:RegisterJobDefinition", "batch:SubmitJob"],
	["braket:CreateJob"],
	["cognito-identity:SetIdentityPoolRoles"],
	["elasticmapreduce:RunJobFlow"],
	["emr-serverless:CreateApplication", "emr-serverless:StartJobRun"],
	["gamelift:CreateBuild", "gamelift:CreateFleet", "gamelift:RequestUploadCredentials"],
	["imagebuilder:CreateComponent", "imagebuilder:CreateImageRecipe", "imagebuilder:CreateInfrastructureConfiguration", "imagebuilder:CreateImage"],
	["kinesisanalytics:CreateApplication", "kinesisanalytics:StartApplication"],
	["omics:CreateWorkflow", "omics:StartRun", "s3:GetObject"],
	["scheduler:CreateSchedule"],
	["ssm:CreateDocument", "ssm:StartAutomationExecution"],
	["states:CreateStateMachine", "states:StartExecution"],
]

# The actions asked about on every resource, lower-cased and by service (iam.one_action):
# iam:# (every IAM action: WARDEN-AWS-IAM-001 or -002 report it), the actions of
# escalations and existing_resource_escalations, and iam:PassRole. Written out (a test checks them): the rule is evaluated on
# every document that may grant on every resource.
every_resource_actions := {
	"iam": ["iam:#", "iam:createpolicyversion", "iam:setdefaultpolicyversion", "iam:attachuserpolicy", "iam:attachgrouppolicy", "iam:attachrolepolicy", "iam:putuserpolicy", "iam:putgrouppolicy", "iam:putrolepolicy", "iam:createaccesskey", "iam:createloginprofile", "iam:updateloginprofile", "iam:updateassumerolepolicy", "iam:addusertogroup", "iam:deleteuserpermissionsboundary", "iam:putuserpermissionsboundary", "iam:deleterolepermissionsboundary", "iam:passrole"],
	"sts": ["sts:assumerole"],
	"ec2": ["ec2:modifyinstanceattribute", "ec2:stopinstances", "ec2:startinstances", "ec2:createlaunchtemplateversion", "ec2:modifylaunchtemplate", "ec2:describeinstances"],
	"ec2-instance-connect": ["ec2-instance-connect:sendsshpublickey"],
	"lambda": ["lambda:updatefunctioncode", "lambda:updatefunctionconfiguration"],
	"glue": ["glue:updatedevendpoint"],
	"cloudformation": ["cloudformation:updatestack", "cloudformation:createchangeset", "cloudformation:executechangeset"],
	"codebuild": ["codebuild:startbuild", "codebuild:startbuildbatch"],
	"ecs": ["ecs:executecommand", "ecs:describetasks"],
	"sagemaker": ["sagemaker:createpresignednotebookinstanceurl", "sagemaker:createnotebookinstancelifecycleconfig", "sagemaker:stopnotebookinstance", "sagemaker:updatenotebookinstance", "sagemaker:startnotebookinstance"],
	"ssm": ["ssm:startsession", "ssm:sendcommand"],
	"apprunner": ["apprunner:updateservice"],
	"bedrock-agentcore": ["bedrock-agentcore:startcodeinterpretersession", "bedrock-agentcore:invokecodeinterpreter", "bedrock-agentcore:invokeagentruntimecommand", "bedrock-agentcore:startbrowsersession", "bedrock-agentcore:connectbrowserautomationstream"],
	"batch": ["batch:submitjob"],
	"codedeploy": ["codedeploy:createdeployment", "codedeploy:registerapplicationrevision", "codedeploy:getdeploymentconfig"],
	"states": ["states:updatestatemachine", "states:startexecution"],
	"sso": ["sso:attachmanagedpolicytopermissionset", "sso:putinlinepolicytopermissionset"],
}

# The actions of pass_role_escalations, lower-cased and by service, asked about somewhere.
pass_role_partners := {
	"ec2": ["ec2:runinstances", "ec2:requestspotinstances"],
	"lambda": ["lambda:createfunction", "lambda:invokefunction", "lambda:createeventsourcemapping", "lambda:addpermission"],
	"glue": ["glue:createdevendpoint", "glue:createjob", "glue:startjobrun", "glue:createtrigger", "glue:updatejob", "glue:createsession", "glue:runstatement"],
	"cloudformation": ["cloudformation:createstack", "cloudformation:createstackset", "cloudformation:createstackinstances", "cloudformation:updatestackset"],
	"datapipeline": ["datapipeline:createpipeline", "datapipeline:putpipelinedefinition", "datapipeline:activatepipeline"],
	"codestar": ["codestar:createproject"],
	"codebuild": ["codebuild:createproject", "codebuild:startbuild", "codebuild:startbuildbatch"],
	"autoscaling": ["autoscaling:createautoscalinggroup", "autoscaling:createlaunchconfiguration", "autoscaling:updateautoscalinggroup"],
	"ecs": ["ecs:registertaskdefinition", "ecs:createservice", "ecs:runtask", "ecs:starttask"],
	"sagemaker": ["sagemaker:createnotebookinstance", "sagemaker:createtrainingjob", "sagemaker:createprocessingjob"],
	"apprunner": ["apprunner:createservice"],
	"bedrock-agentcore": ["bedrock-agentcore:createcodeinterpreter", "bedrock-agentcore:startcodeinterpretersession", "bedrock-agentcore:invokecodeinterpreter", "bedrock-agentcore:createagentruntime", "bedrock-agentcore:createagentruntimeendpoint", "bedrock-agentcore:createworkloadidentity", "bedrock-agentcore:invokeagentruntimecommand", "bedrock-agentcore:createbrowser", "bedrock-agentcore:startbrowsersession", "bedrock-agentcore:connectbrowserautomationstream"],
	"batch": ["batch:registerjobdefinition", "batch:submitjob"],
	"braket": ["braket:createjob"],
	"cognito-identity": ["cognito-identity:setidentitypoolroles"],
	"elasticmapreduce": ["elasticmapreduce:runjobflow"],
	"emr-serverless": ["emr-serverless:createapplication", "emr-serverless:startjobrun"],
	"gamelift": ["gamelift:createbuild", "gamelift:createfleet", "gamelift:requestuploadcredentials"],
	"imagebuilder": ["imagebuilder:createcomponent", "imagebuilder:createimagerecipe", "imagebuilder:createinfrastructureconfiguration", "imagebuilder:createimage"],
	"kinesisanalytics": ["kinesisanalytics:createapplication", "kinesisanalytics:startapplication"],
	"omics": ["omics:createworkflow", "omics:startrun"],
	"s3": ["s3:getobject"],
	"scheduler": ["scheduler:createschedule"],
	"ssm": ["ssm:createdocument", "ssm:startautomationexecution"],
	"states": ["states:createstatemachine", "states:startexecution"],
}

# action_names maps each lower-cased action of the tables above to its name.
action_names := {
	"apprunner:createservice": "apprunner:CreateService",
	"apprunner:updateservice": "apprunner:UpdateService",
	"autoscaling:createautoscalinggroup": "autoscaling:CreateAutoScalingGroup",
	"autoscaling:createlaunchconfiguration": "autoscaling:CreateLaunchConfiguration",
	"autoscaling:updateautoscalinggroup": "autoscaling:UpdateAutoScalingGroup",
	"batch:registerjobdefinition": "batch:RegisterJobDefinition",
	"batch:submitjob": "batch:SubmitJob",
	"bedrock-agentcore:connectbrowserautomationstream": "bedrock-agentcore:ConnectBrowserAutomationStream",
	"bedrock-agentcore:createagentruntime": "bedrock-agentcore:CreateAgentRuntime",
	"bedrock-agentcore:createagentruntimeendpoint": "bedrock-agentcore:CreateAgentRuntimeEndpoint",
	"bedrock-agentcore:createbrowser": "bedrock-agentcore:CreateBrowser",
	"bedrock-agentcore:createcodeinterpreter": "bedrock-agentcore:CreateCodeInterpreter",
	"bedrock-agentcore:createworkloadidentity": "bedrock-agentcore:CreateWorkloadIdentity",
	"bedrock-agentcore:invokeagentruntimecommand": "bedrock-agentcore:InvokeAgentRuntimeCommand",
	"bedrock-agentcore:invokecodeinterpreter": "bedrock-agentcore:InvokeCodeInterpreter",
	"bedrock-agentcore:startbrowsersession": "bedrock-agentcore:StartBrowserSession",
	"bedrock-agentcore:startcodeinterpretersession": "bedrock-agentcore:StartCodeInterpreterSession",
	"braket:createjob": "braket:CreateJob",
	"cloudformation:createchangeset": "cloudformation:CreateChangeSet",
	"cloudformation:createstack": "cloudformation:CreateStack",
	"cloudformation:createstackinstances": "cloudformation:CreateStackInstances",
	"cloudformation:createstackset": "cloudformation:CreateStackSet",
	"cloudformation:executechangeset": "cloudformation:ExecuteChangeSet",
	"cloudformation:updatestack": "cloudformation:UpdateStack",
	"cloudformation:updatestackset": "cloudformation:UpdateStackSet",
	"codebuild:createproject": "codebuild:CreateProject",
	"codebuild:startbuild": "codebuild:StartBuild",
	"codebuild:startbuildbatch": "codebuild:StartBuildBatch",
	"codedeploy:createdeployment": "codedeploy:CreateDeployment",
	"codedeploy:getdeploymentconfig": "codedeploy:GetDeploymentConfig",
	"codedeploy:registerapplicationrevision": "codedeploy:RegisterApplicationRevision",
	"codestar:createproject": "codestar:CreateProject",
	"cognito-identity:setidentitypoolroles": "cognito-identity:SetIdentityPoolRoles",
	"datapipeline:activatepipeline": "datapipeline:ActivatePipeline",
	"datapipeline:createpipeline": "datapipeline:CreatePipeline",
	"datapipeline:putpipelinedefinition": "datapipeline:PutPipelineDefinition",
	"ec2-instance-connect:sendsshpublickey": "ec2-instance-connect:SendSSHPublicKey",
	"ec2:createlaunchtemplateversion": "ec2:CreateLaunchTemplateVersion",
	"ec2:describeinstances": "ec2:DescribeInstances",
	"ec2:modifyinstanceattribute": "ec2:ModifyInstanceAttribute",
	"ec2:modifylaunchtemplate": "ec2:ModifyLaunchTemplate",
	"ec2:requestspotinstances": "ec2:RequestSpotInstances",
	"ec2:runinstances": "ec2:RunInstances",
	"ec2:startinstances": "ec2:StartInstances",
	"ec2:stopinstances": "ec2:StopInstances",
	"ecs:createservice": "ecs:CreateService",
	"ecs:describetasks": "ecs:DescribeTasks",
	"ecs:executecommand": "ecs:ExecuteCommand",
	"ecs:registertaskdefinition": "ecs:RegisterTaskDefinition",
	"ecs:runtask": "ecs:RunTask",
	"ecs:starttask": "ecs:StartTask",
	"elasticmapreduce:runjobflow": "elasticmapreduce:RunJobFlow",
	"emr-serverless:createapplication": "emr-serverless:CreateApplication",
	"emr-serverless:startjobrun": "emr-serverless:StartJobRun",
	"gamelift:createbuild": "gamelift:CreateBuild",
	"gamelift:createfleet": "gamelift:CreateFleet",
	"gamelift:requestuploadcredentials": "gamelift:RequestUploadCredentials",
	"glue:createdevendpoint": "glue:CreateDevEndpoint",
	"glue:createjob": "glue:CreateJob",
	"glue:createsession": "glue:CreateSession",
	"glue:createtrigger": "glue:CreateTrigger",
	"glue:runstatement": "glue:RunStatement",
	"glue:startjobrun": "glue:StartJobRun",
	"glue:updatedevendpoint": "glue:UpdateDevEndpoint",
	"glue:updatejob": "glue:UpdateJob",
	"iam:addusertogroup": "iam:AddUserToGroup",
	"iam:attachgrouppolicy": "iam:AttachGroupPolicy",
	"iam:attachrolepolicy": "iam:AttachRolePolicy",
	"iam:attachuserpolicy": "iam:AttachUserPolicy",
	"iam:createaccesskey": "iam:CreateAccessKey",
	"iam:createloginprofile": "iam:CreateLoginProfile",
	"iam:createpolicyversion": "iam:CreatePolicyVersion",
	"iam:deleterolepermissionsboundary": "iam:DeleteRolePermissionsBoundary",
	"iam:deleteuserpermissionsboundary": "iam:DeleteUserPermissionsBoundary",
	"iam:passrole": "iam:PassRole",
	"iam:putgrouppolicy": "iam:PutGroupPolicy",
	"iam:putrolepolicy": "iam:PutRolePolicy",
	"iam:putuserpermissionsboundary": "iam:PutUserPermissionsBoundary",
	"iam:putuserpolicy": "iam:PutUserPolicy",
	"iam:setdefaultpolicyversion": "iam:SetDefaultPolicyVersion",
	"iam:updateassumerolepolicy": "iam:UpdateAssumeRolePolicy",
	"iam:updateloginprofile": "iam:UpdateLoginProfile",
	"imagebuilder:createcomponent": "imagebuilder:CreateComponent",
	"imagebuilder:createimage": "imagebuilder:CreateImage",
	"imagebuilder:createimagerecipe": "imagebuilder:CreateImageRecipe",
	"imagebuilder:createinfrastructureconfiguration": "imagebuilder:CreateInfrastructureConfiguration",
	"kinesisanalytics:createapplication": "kinesisanalytics:CreateApplication",
	"kinesisanalytics:startapplication": "kinesisanalytics:StartApplication",
	"lambda:addpermission": "lambda:AddPermission",
	"lambda:createeventsourcemapping": "lambda:CreateEventSourceMapping",
	"lambda:createfunction": "lambda:CreateFunction",
	"lambda:invokefunction": "lambda:InvokeFunction",
	"lambda:updatefunctioncode": "lambda:UpdateFunctionCode",
	"lambda:updatefunctionconfiguration": "lambda:UpdateFunctionConfiguration",
	"omics:createworkflow": "omics:CreateWorkflow",
	"omics:startrun": "omics:StartRun",
	"s3:getobject": "s3:GetObject",
	"sagemaker:createnotebookinstance": "sagemaker:CreateNotebookInstance",
	"sagemaker:createnotebookinstancelifecycleconfig": "sagemaker:CreateNotebookInstanceLifecycleConfig",
	"sagemaker:createpresignednotebookinstanceurl": "sagemaker:CreatePresignedNotebookInstanceUrl",
	"sagemaker:createprocessingjob": "sagemaker:CreateProcessingJob",
	"sagemaker:createtrainingjob": "sagemaker:CreateTrainingJob",
	"sagemaker:startnotebookinstance": "sagemaker:StartNotebookInstance",
	"sagemaker:stopnotebookinstance": "sagemaker:StopNotebookInstance",
	"sagemaker:updatenotebookinstance": "sagemaker:UpdateNotebookInstance",
	"scheduler:createschedule": "scheduler:CreateSchedule",
	"ssm:createdocument": "ssm:CreateDocument",
	"ssm:sendcommand": "ssm:SendCommand",
	"ssm:startautomationexecution": "ssm:StartAutomationExecution",
	"ssm:startsession": "ssm:StartSession",
	"sso:attachmanagedpolicytopermissionset": "sso:AttachManagedPolicyToPermissionSet",
	"sso:putinlinepolicytopermissionset": "sso:PutInlinePolicyToPermissionSet",
	"states:createstatemachine": "states:CreateStateMachine",
	"states:startexecution": "states:StartExecution",
	"states:updatestatemachine": "states:UpdateStateMachine",
	"sts:assumerole": "sts:AssumeRole",
}

# escalating_documents[d] is the set of the names of the actions of every_resource_actions
# that document d of input.resource allows on every resource, for the documents that can
# allow an action on every resource but not every IAM action.
escalating_documents[d] := {action_names[a] | some a in allowed} if {
	some d in iam.granting_documents
	allowed := iam.document_allowed(d, every_resource_actions)
	count(allowed) > 0
	not "iam:#" in allowed
}

deny contains violation if {
	some d in iam.granting_documents
	allowed := escalating_documents[d]
	some path in escalations
	every action in path {
		action in allowed
	}
	src := iam.resource_sources[d]
	violation := object.union_n([
		{"msg": sprintf("%s allows %s on %s, which lets its holder escalate its privileges", [iam.where(src), path_name(path), iam.resources_text(d, path)])},
		actions_field(path),
		iam.violation_fields(src, concat("+", path)),
		usage.rightsizing_paths(src.document, [path]),
	])
}

deny contains violation if {
	some d in iam.granting_documents
	allowed := escalating_documents[d]
	paths := [path |
		some path in existing_resource_escalations
		every action in path {
			action in allowed
		}
	]
	count(paths) > 0
	src := iam.resource_sources[d]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows %s on %s, which lets its holder run code as the roles of existing resources",
				[iam.where(src), concat("; ", [path_name(path) | some path in paths]), iam.resources_text(d, flat_all(paths))],
			),
			"paths": paths,
		},
		iam.violation_fields(src, "existing-resources"),
		usage.rightsizing_paths(src.document, paths),
	])
}

deny contains violation if {
	some d in iam.granting_documents
	allowed := escalating_documents[d]
	"iam:PassRole" in allowed
	somewhere := {action_names[a] | some a in iam.document_allowed_somewhere(d, pass_role_partners)}
	paths := [path |
		some partners in pass_role_escalations
		every action in partners {
			action in somewhere
		}
		path := array.concat(["iam:PassRole"], partners)
	]
	count(paths) > 0
	src := iam.resource_sources[d]
	launches := [action | some i, action in flat(paths); not action in array.slice(flat(paths), 0, i)]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s allows %s (iam:PassRole on every role), which lets its holder run code as any role",
				[iam.where(src), concat("; ", [path_name(path) | some path in paths])],
			),
			"compute_actions": launches,
			"paths": paths,
		},
		iam.violation_fields(src, "iam:PassRole"),
		usage.rightsizing_paths(src.document, paths),
	])
}

# flat_all(paths) is every action of the paths.
flat_all(paths) := {action | some path in paths; some action in path}

# flat(paths) is the partners of the iam:PassRole paths, in order.
flat(paths) := [action | some path in paths; some action in array.slice(path, 1, count(path))]

# path_name(path) names a path: its action, or "A with B and C".
path_name(path) := path[0] if {
	count(path) == 1
} else := sprintf("%s with %s", [path[0], and_list(array.slice(path, 1, count(path)))])

and_list(xs) := xs[0] if {
	count(xs) == 1
} else := sprintf("%s and %s", [concat(", ", array.slice(xs, 0, count(xs) - 1)), xs[count(xs) - 1]])

# actions_field(path) lists the actions of a path of more than one.
actions_field(path) := {"actions": path} if count(path) > 1

else := {}
