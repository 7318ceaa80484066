# METADATA
# title: Role can be assumed by anyone
# description: A trust policy that lets any principal (Principal "*", AWS "*", or any user of a public identity provider such as GitHub Actions) assume the role without a condition hands the role's permissions to the whole internet.
# custom:
#   id: WARDEN-AWS-IAM-005
#   severity: critical
#   resource_types: [aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-3", "AC-6"], pci-dss-4.0: ["7.2.1"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15", "A.8.3"]}
#   remediation: {action: aws.iam.update_trust_policy, risk: critical, params: [principal]}
package warden.aws.iam.public_trust

import data.warden.lib.display
import data.warden.lib.iam

deny contains violation if {
	iam.may_trust_anyone # else no principal is open
	some principal in {p.value | some p in iam.resource_open_trusts}
	actions := sort({p.action | some p in iam.resource_open_trusts; p.value == principal})
	violation := {
		"msg": sprintf(
			"role %s can be assumed by anyone through %s (%s) without a condition",
			[display.name, principal, concat(", ", actions)],
		),
		"key": principal,
		"principal": principal,
	}
}
