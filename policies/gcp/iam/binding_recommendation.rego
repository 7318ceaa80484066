# METADATA
# title: IAM recommender suggests removing or shrinking a role binding
# description: Google's IAM recommender compares each principal's role bindings with the permissions it used over the last 90 days and suggests removing a role nobody uses, or replacing it with smaller roles that cover what was used. A grant beyond what is used is access an attacker gets for free with the principal's credentials. The fix applies the recommendation behind approval, at high risk since the recommender only sees 90 days and a rarely used grant (a yearly job, break-glass access) can be needed. It claims the recommendation, changes the binding under the policy's etag, and marks the recommendation succeeded or failed; rollback gives the role back.
# custom:
#   id: WARDEN-GCP-IAM-021
#   severity: medium
#   resource_types: [gcp.project.iam_policy]
#   frameworks: {nist-800-53-r5: ["AC-6"], soc2: ["CC6.3"], iso-27001-2022: ["A.8.2"]}
#   remediation: {action: gcp.iam.apply_role_recommendation, risk: high, params: [role, member, new_roles, recommendation]}
package warden.gcp.iam.binding_recommendation

import data.warden.lib.display
import data.warden.lib.gcp

bindings := object.get(input.resource.attributes, "bindings", [])

# Without the recommendations attribute (not collected, or recommendations_error) nothing
# is concluded: the loop below has nothing to go over.
recommendations := input.resource.attributes.recommendations

# A recommendation still applies while the policy grants its role to its member: one the
# policy no longer grants was acted on since Google computed it (it refreshes daily).
granted(role, member) if {
	some b in bindings
	b.role == role
	member in b.members
}

# suggestion says what Google suggests: remove the role, or replace it with new_roles.
suggestion(rec, role, member) := sprintf("replacing %s of %s with %s", [role, member, concat(", ", new_roles)]) if {
	new_roles := [r | some r in rec.new_roles; is_string(r)]
	count(new_roles) > 0
} else := sprintf("removing %s from %s", [role, member])

# evidence is what the recommendation rests on, as the insight counts it.
evidence(rec) := sprintf("used %d of %d permissions in 90 days%s", [rec.exercised_permissions, rec.total_permissions, inferred(rec)]) if {
	is_number(rec.exercised_permissions)
	is_number(rec.total_permissions)
} else := sprintf("used %d of its permissions in 90 days%s", [rec.exercised_permissions, inferred(rec)]) if {
	is_number(rec.exercised_permissions)
} else := "permission use not known"

inferred(rec) := sprintf(", %d more inferred as needed", [rec.inferred_permissions]) if {
	is_number(rec.inferred_permissions)
	rec.inferred_permissions > 0
} else := ""

# refreshed is the day Google computed the recommendation: the data's own date.
refreshed(rec) := substring(rec.last_refresh, 0, 10) if {
	is_string(rec.last_refresh)
	count(rec.last_refresh) >= 10
} else := "an unknown date"

deny contains violation if {
	some rec in recommendations
	object.get(rec, "state", "ACTIVE") == "ACTIVE"
	role := rec.role
	member := rec.member
	granted(role, member)
	violation := {
		"msg": sprintf(
			"%s: Google's IAM recommender suggests %s%s (%s; data of %s)",
			[
				gcp.policy_holder, suggestion(rec, role, member), gcp.condition_note(bindings, role, member),
				evidence(rec), refreshed(rec),
			],
		),
		"key": concat("/", [role, member]),
		"role": role,
		"member": member,
		"new_roles": object.get(rec, "new_roles", []),
		"recommendation": display.field(rec, "name", ""),
		"etag": display.field(rec, "etag", ""),
	}
}
