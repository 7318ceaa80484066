# METADATA
# title: Root user has no MFA
# description: The root user can do anything in the account, including closing it; its password alone must never be enough to sign in. No fix is automated, as only the root user can enable its own MFA, with the device in hand.
# custom:
#   id: WARDEN-AWS-IAM-012
#   severity: critical
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.5"], nist-800-53-r5: ["IA-2(1)"], pci-dss-4.0: ["8.4.1"], soc2: ["CC6.1"], iso-27001-2022: ["A.8.5"]}
#   prowler: [iam_root_mfa_enabled]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_mfa_disabled

import data.warden.lib.display

deny contains violation if {
	input.resource.attributes.mfa_active == false
	violation := {"msg": sprintf("the root user of account %s has no MFA device", [display.account])}
}
