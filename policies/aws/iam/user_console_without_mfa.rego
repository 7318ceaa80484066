# METADATA
# title: Console user has no MFA
# description: A console password alone falls to phishing and reuse; every IAM user who can sign in to the console needs an MFA device. No fix is automated, as the user must register the device themselves, and removing the password instead would lock them out.
# custom:
#   id: WARDEN-AWS-IAM-010
#   severity: high
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.10"], nist-800-53-r5: ["IA-2(1)", "IA-2(2)"], pci-dss-4.0: ["8.4.2"], soc2: ["CC6.1"], iso-27001-2022: ["A.8.5"]}
#   prowler: [iam_user_mfa_enabled_console_access]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.user_console_without_mfa

import data.warden.lib.display

deny contains violation if {
	input.resource.attributes.password_enabled == true
	input.resource.attributes.mfa_active == false
	violation := {"msg": sprintf("user %s can sign in to the console with a password but has no MFA device", [display.name])}
}
