# METADATA
# title: Root user's MFA device is virtual, not hardware
# description: A virtual MFA device lives on a phone or computer that is also used for other things, where it can be copied, backed up to the cloud or lost with the device; the root user's second factor should be a dedicated hardware device kept in a safe place. No fix is automated, as only the root user can register its MFA device, with the new device in hand.
# custom:
#   id: WARDEN-AWS-IAM-029
#   severity: high
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.6"]}
#   prowler: [iam_root_hardware_mfa_enabled]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_virtual_mfa

import data.warden.lib.display

# virtual_mfa is absent when MFA is off (WARDEN-AWS-IAM-012's finding) or the virtual
# devices could not be listed: unknown, never judged.
deny contains violation if {
	input.resource.attributes.virtual_mfa == true
	violation := {"msg": sprintf("the root user of account %s uses a virtual MFA device instead of a hardware one", [display.account])}
}
