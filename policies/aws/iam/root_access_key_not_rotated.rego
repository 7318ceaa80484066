# METADATA
# title: Root access key is older than 90 days
# description: >-
#   A root access key is the most powerful long-lived credential of an account, and the
#   longer it lives the more copies of it there are in scripts, laptops and logs. Its age is
#   judged as a user's key's (WARDEN-AWS-IAM-008, the same setting access_key_max_age_days),
#   from the credential report's creation time of each key; WARDEN-AWS-IAM-011 reports that
#   root has keys at all. No fix is automated: rotating or deleting a root key takes a root
#   session (the root user signing in, or the management account's centralized root
#   access), and whatever still uses the key must first move to a role.
# custom:
#   id: WARDEN-AWS-IAM-040
#   severity: high
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.14"], nist-800-53-r5: ["IA-5"], pci-dss-4.0: ["8.6.3"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.17"]}
#   prowler: [iam_rotate_access_key_90_days]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_access_key_not_rotated

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation. The
# setting is WARDEN-AWS-IAM-008's: root's keys are held to users' rotation.
max_days := n if {
	n := data.warden.config.access_key_max_age_days
} else := 90

cutoff := wtime.older_than_bound(max_days)

deny contains violation if {
	some key in input.resource.attributes.access_keys
	key.status == "Active"
	is_string(key.created)
	time.parse_rfc3339_ns(key.created) <= cutoff
	violation := {
		"msg": sprintf(
			"access key %v of the root user of account %s was created %d days ago and has not been rotated (maximum %d)",
			[key.slot, display.account, wtime.days_since(key.created), max_days],
		),
		"key": sprintf("%v", [key.slot]),
	}
}
