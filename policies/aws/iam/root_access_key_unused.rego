# METADATA
# title: Root access key has not been used for 90 days
# description: >-
#   A root access key nobody uses is the account's most powerful credential left standing
#   for nothing but to leak. Its use is judged as a user's key's (WARDEN-AWS-IAM-007, the same
#   setting access_key_unused_days), from the credential report's last use of each key (a
#   key never used counts from its creation). No fix is automated: deactivating or deleting
#   a root key takes a root session (the root user signing in, or the management account's
#   centralized root access).
# custom:
#   id: WARDEN-AWS-IAM-041
#   severity: high
#   resource_types: [aws.iam.root_user]
#   frameworks: {cis-aws-3.0: ["1.12"], nist-800-53-r5: ["AC-2(3)", "IA-4"], pci-dss-4.0: ["8.2.6"], soc2: ["CC6.2"], iso-27001-2022: ["A.5.18"]}
#   prowler: [iam_user_accesskey_unused]
#   remediation: {action: manual, risk: none}
package warden.aws.iam.root_access_key_unused

import data.warden.lib.display
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation. The
# setting is WARDEN-AWS-IAM-007's: root's keys are held to users' use.
max_days := n if {
	n := data.warden.config.access_key_unused_days
} else := 90

cutoff := wtime.older_than_bound(max_days)

deny contains violation if {
	some key in input.resource.attributes.access_keys
	key.status == "Active"
	last_used := key.last_used
	is_string(last_used)
	time.parse_rfc3339_ns(last_used) <= cutoff
	violation := {
		"msg": sprintf(
			"access key %v of the root user of account %s has not been used for %d days (last used %s)",
			[key.slot, display.account, wtime.days_since(last_used), substring(last_used, 0, 10)],
		),
		"key": sprintf("%v", [key.slot]),
	}
}

# Never used (last_used absent, null or empty): its age counts from its creation.
deny contains violation if {
	some key in input.resource.attributes.access_keys
	key.status == "Active"
	object.get(key, "last_used", null) in {null, ""}
	is_string(key.created)
	time.parse_rfc3339_ns(key.created) <= cutoff
	violation := {
		"msg": sprintf(
			"access key %v of the root user of account %s has never been used since it was created %d days ago",
			[key.slot, display.account, wtime.days_since(key.created)],
		),
		"key": sprintf("%v", [key.slot]),
	}
}
