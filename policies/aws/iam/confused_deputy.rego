# METADATA
# title: Service role trust does not prevent the cross-service confused deputy
# description: >-
#   A role that lets an AWS service assume it without a condition on the source
#   (aws:SourceAccount, aws:SourceArn, aws:SourceOrgID, aws:SourceOrgPaths or
#   aws:SourceOwner) can be used by that service on behalf of another account's resources:
#   whoever can make the service act with the role's ARN borrows its permissions.
#   Service-linked roles (whose trust AWS manages) and the services that AWS confines to
#   the role's account (Secrets Manager, EKS) are left out, as Prowler does. No fix is
#   automated, since the right source account or ARN depends on which resources the service
#   acts for, and a wrong condition cuts the service off.
# custom:
#   id: WARDEN-AWS-IAM-023
#   severity: medium
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-3"]}
#   prowler: [iam_role_cross_service_confused_deputy_prevention]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.confused_deputy

import data.warden.lib.display
import data.warden.lib.iam

# Services that AWS runs in the role's own account only (Prowler's exemptions).
confined_services := {"secretsmanager.amazonaws.com", "eks.amazonaws.com"}

# The condition keys that tie a service's request to its source (lower-case).
source_keys := {"aws:sourceaccount", "aws:sourcearn", "aws:sourceorgid", "aws:sourceorgpaths", "aws:sourceowner"}

deny contains violation if {
	some service in unguarded_services
	not input.resource.attributes.service_linked
	not contains(input.resource.uid, ":role/aws-service-role/")
	violation := {
		"msg": sprintf(
			"role %s lets %s assume it without an aws:SourceAccount or aws:SourceArn condition, so the service can act with it for another account (confused deputy)",
			[display.name, service],
		),
		"key": service,
	}
}

# unguarded_services is the set of the AWS service principals that an Allow statement of
# the trust policy lets assume the role (sts:AssumeRole) without a source condition. The
# Statement is a list, or one statement.
unguarded_services contains service if {
	some s in input.resource.attributes.assume_role_policy.Statement
	some service in unguarded_services_of(s)
}

unguarded_services contains service if {
	s := input.resource.attributes.assume_role_policy.Statement
	is_object(s)
	some service in unguarded_services_of(s)
}

unguarded_services_of(s) := {service | some service in iam.as_list(s.Principal.Service); cross_service(service)} if {
	s.Effect == "Allow"
	s.Principal.Service
	not source_condition(s)
	"sts:AssumeRole" in iam.assumed_actions(s)
}

cross_service(service) if service == "*"

cross_service(service) if {
	is_string(service)
	not lower(service) in confined_services
	regex.match(`(?i)\.amazon(aws)?\.com$`, service)
}

# source_condition(s) holds when a Condition of s requires a source key to equal or match
# values. A negated operator, Null, or ...IfExists (which passes when the key is absent)
# does not tie the request to a source.
source_condition(s) if {
	some operator, keys in s.Condition
	regex.match(`(?i)^(ForAnyValue:)?(String|Arn)(Equals|Like)(IgnoreCase)?$`, operator)
	some key, _ in keys
	lower(key) in source_keys
}
