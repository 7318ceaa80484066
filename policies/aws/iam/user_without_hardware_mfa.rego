# METADATA
# title: Console user has no hardware MFA
# description: >-
#   A virtual MFA device is an app on a phone or computer that is also used for other
#   things, whose secret can be copied, synced to the cloud or lost with the device; a
#   console user's second factor should be a hardware device (a FIDO security key or a
#   hardware token), and a virtual device kept beside one remains a way in. A user without a
#   console password is not reported, even with active access keys and no MFA at all
#   (Prowler reports them): no MFA device guards a request signed with an access key unless
#   a policy asks aws:MultiFactorAuthPresent, and the keys are judged by their own policies
#   (WARDEN-AWS-IAM-007, -008, -009, -026). No fix is automated, as a hardware device must
#   be issued to the user, who registers it themselves.
# custom:
#   id: WARDEN-AWS-IAM-030
#   severity: medium
#   resource_types: [aws.iam.user]
#   prowler: [iam_user_hardware_mfa_enabled]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.user_without_hardware_mfa

import data.warden.lib.display

# mfa_devices is absent when the devices could not be listed: unknown, never "no device".
devices := d if {
	d := input.resource.attributes.mfa_devices
	is_array(d)
}

# Serials of the user's virtual devices; a device without a serial is named by its position.
virtual := sort([display.field(d, "serial", sprintf("#%d", [i])) | some i, d in devices; d.type == "virtual"])

hardware := [d | some d in devices; d.type == "hardware"]

# password_enabled is a bool: comparing it with true lets OPA's rule index skip users
# without a console password and users whose credential report was not read (unknown).
deny contains violation if {
	input.resource.attributes.password_enabled == true
	count(devices) == 0
	violation := {"msg": sprintf("user %s can sign in to the console with a password and has no MFA device, hardware or virtual", [display.name])}
}

deny contains violation if {
	input.resource.attributes.password_enabled == true
	count(virtual) > 0
	count(hardware) == 0
	violation := {"msg": sprintf("user %s signs in to the console with a virtual MFA device (%s) and has no hardware one", [display.name, concat(", ", virtual)])}
}

deny contains violation if {
	input.resource.attributes.password_enabled == true
	count(virtual) > 0
	count(hardware) > 0
	violation := {"msg": sprintf("user %s has a hardware MFA device but can still sign in to the console with a virtual one (%s)", [display.name, concat(", ", virtual)])}
}
