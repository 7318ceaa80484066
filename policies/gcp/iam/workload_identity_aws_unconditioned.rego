# METADATA
# title: AWS workload identity provider has no attribute condition
# description: An AWS provider accepts a signed GetCallerIdentity request from any user or role of the trusted AWS account, and signing one needs no IAM permission there; without an attribute condition naming the roles meant to federate (assertion.arn), every EC2 instance profile, Lambda function and person of that account becomes the pool's federated identity and can use every role bound to the pool's principal sets. No fix is automated because the condition must name the AWS roles meant to get in, which only their owner knows, and a wrong one locks out the workloads using it.
# custom:
#   id: WARDEN-GCP-IAM-020
#   severity: medium
#   resource_types: [gcp.iam.workload_identity_provider]
#   frameworks: {nist-800-53-r5: ["AC-3", "IA-8"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15", "A.8.5"]}
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.workload_identity_aws_unconditioned

import data.warden.lib.display
import data.warden.lib.gcp

# An AWS provider is one whose protocol says so, or, without a protocol, one that names
# an AWS account.
aws_provider if input.resource.attributes.protocol == "aws"

aws_provider if {
	not input.resource.attributes.protocol
	is_string(input.resource.attributes.aws_account_id)
	input.resource.attributes.aws_account_id != ""
}

deny contains violation if {
	gcp.workload_provider_unconditioned
	aws_provider
	gcp.workload_provider_active
	violation := {"msg": sprintf(
		"AWS workload identity provider %s of pool %s has no attribute condition: any user or role of AWS account %s can sign in as the pool's federated identities",
		[display.name, display.attribute("pool", "unknown"), display.attribute("aws_account_id", "(unknown)")],
	)}
}
