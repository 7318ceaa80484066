# METADATA
# title: Customer-managed policy grants what none of its principals used for 90 days
# description: >-
#   A customer-managed policy grants services, or names actions, that none of the users,
#   roles and groups it is attached to used for the whole window (setting
#   unused_access_window_days, 90 days), by IAM's last-accessed data of each of them.
#   Narrow the policy to what is used. Only proven disuse counts: the policy is judged
#   only when the data of every principal it is attached to is complete, when the policy
#   and all of them are at least as old as the window, and when none is a service-linked
#   role or tagged warden-least-privilege: exempt (usage from IAM Access Analyzer, which
#   does not say what is used, is never complete for a policy). A service any of them
#   used counts as used, even if it came through another policy. Only what the document
#   names can be removed: a service's patterns ("kms:*", "kms:Decrypt") or "*", and
#   actions named one by one. The fix makes a new default version without them, behind approval (high
#   risk); rollback makes the old version the default again.
# custom:
#   id: WARDEN-AWS-IAM-037
#   severity: medium
#   resource_types: [aws.iam.policy]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(7)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.18"]}
#   remediation: {action: aws.iam.rightsize_managed_policy, risk: high, params: [window_days]}
package warden.aws.iam.managed_policy_unused

import data.warden.lib.display
import data.warden.lib.usage

# allowed are the action patterns of the document's Allow statements, lower-cased.
allowed contains lower(p) if {
	usage.kind == "policy"
	some s in statements
	s.Effect == "Allow"
	some p in patterns(s.Action)
}

statements := s if {
	s := input.resource.attributes.document.Statement
	is_array(s)
} else := [s] if {
	s := input.resource.attributes.document.Statement
	is_object(s)
}

patterns(a) := [a] if is_string(a)

patterns(a) := [p | some p in a; is_string(p)] if is_array(a)

# names(svc) holds when the document names the service on its own: "*" or a pattern of
# that service, which the fix can remove or narrow.
names(_) if "*" in allowed

names(svc) if {
	some p in allowed
	[s, _] := split(p, ":")
	s == svc
}

unused_services := [u | some u in usage.unused_services; names(lower(u.service))]

unused_actions := [u | some u in usage.unused_actions; lower(u.action) in allowed]

principal_names := sort([p.name | some p in usage.facts.principals])

deny contains violation if {
	count(unused_services) + count(unused_actions) > 0
	violation := {
		"msg": sprintf(
			"customer-managed policy %s, attached to %d %s (%s), grants what none of them used for %d days or more: %s; data as of %s",
			[
				display.name, count(principal_names), plural(count(principal_names), "principal"), usage.listed(principal_names),
				usage.window_days, evidence, usage.day(usage.facts.as_of),
			],
		),
		"unused_services": [{"service": u.service, "last_used": u.last_used} | some u in unused_services],
		"unused_actions": [{"action": u.action, "last_used": u.last_used} | some u in unused_actions],
		"principals": principal_names,
		"window_days": usage.window_days,
		"as_of": usage.facts.as_of,
	}
}

evidence := usage.listed(array.concat(
	[sprintf("%s (%s)", [u.service, u.evidence]) | some u in unused_services],
	[sprintf("%s (%s)", [u.action, u.evidence]) | some u in unused_actions],
))

plural(1, word) := word

plural(n, word) := concat("", [word, "s"]) if n != 1
