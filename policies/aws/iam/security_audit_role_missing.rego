# METADATA
# title: No role has the SecurityAudit policy
# description: Security reviews and incident responders need to read the account's configuration; without a role carrying the SecurityAudit managed policy they get no access, or broader access (ReadOnlyAccess reads data too, administrators change things) than auditing needs. No fix is automated, as who may assume the audit role (its trust policy) is for the account's owners to decide.
# custom:
#   id: WARDEN-AWS-IAM-032
#   severity: low
#   resource_types: [aws.iam.account]
#   prowler: [iam_securityaudit_role_created]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.security_audit_role_missing

import data.warden.lib.display

deny contains violation if {
	input.resource.attributes.security_audit_roles == []
	violation := {"msg": sprintf("account %s has no IAM role with the SecurityAudit policy attached", [display.account])}
}
