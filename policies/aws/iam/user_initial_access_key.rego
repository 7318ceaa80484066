# METADATA
# title: Console user has an access key set up with the user and never used
# description: An access key created together with a console user (a box ticked in the user-creation wizard or a line of an onboarding script) and never used since is a credential nobody needed, which can only leak; create keys later, when a user shows the need. No fix is automated here, as the finding is on the user, the only resource that says when the user was created, while the deactivation fix acts on access-key resources; deactivate or delete the key by hand (WARDEN-AWS-IAM-007 deactivates it once it has been unused long enough).
# custom:
#   id: WARDEN-AWS-IAM-026
#   severity: medium
#   resource_types: [aws.iam.user]
#   frameworks: {cis-aws-3.0: ["1.11"]}
#   prowler: [iam_user_no_setup_initial_access_key]
#   remediation: {action: notify, risk: none}
package warden.aws.iam.user_initial_access_key

import data.warden.lib.display

# Settings are rules without arguments: computed once per evaluation. A key created at
# most max_minutes minutes after (or before: clocks of a credential report and of IAM's
# lists may disagree by seconds) its user was set up with the user.
max_minutes := n if {
	n := data.warden.config.initial_access_key_minutes
} else := 10

window_ns := max_minutes * 60000000000

# The user's creation, when known.
user_created_ns := time.parse_rfc3339_ns(created) if {
	created := input.resource.attributes.created
	is_string(created)
}

# password_enabled is a bool: comparing it with true lets OPA's rule index skip users
# without a console password (CIS 1.11's scope) and users whose credential report was not
# read (unknown).
deny contains violation if {
	input.resource.attributes.password_enabled == true
	some i, key in input.resource.attributes.access_keys
	key.status == "Active"
	object.get(key, "last_used", null) in {null, ""}
	is_string(key.created)
	abs(time.parse_rfc3339_ns(key.created) - user_created_ns) <= window_ns

	# A key without an id is named by its position: it is still reported.
	id := display.field(key, "id", sprintf("#%d", [i]))
	violation := {
		"msg": sprintf(
			"user %s can sign in to the console and has active access key %s, created with the user on %s and never used",
			[display.name, id, substring(key.created, 0, 10)],
		),
		"key": id,
	}
}
