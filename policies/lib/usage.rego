# METADATA
# title: Usage helpers
# description: >-
#   What IAM's service-last-accessed data (attributes.usage of a user, role or group) shows
#   about the principal being evaluated: which granted services and actions went unused for
#   a whole window, with the evidence, failing closed wherever the data cannot speak.
package warden.lib.usage

# The contract (the collector's attributes.usage): usage.services lists exactly the services
# the principal's policies grant, each with last_used (null: not used since tracked_since)
# and, for services tracked per action, actions with their own last_used. A service or an
# action counts as UNUSED only when the data proves it for the whole window:
#   - last_used is null and tracking began at or before the window's start, or
#   - last_used is at or before the window's start.
# Anything else counts as used: no usage attribute, usage.complete != true, a time that is
# missing or not a string, a principal younger than the window, a null last_used while
# tracking began within the window. The window ends at usage.as_of, the data's own time,
# so that days are counted from what the data saw (and a late collection adds nothing).
#
# Two sources fill it. IAM Access Advisor (source aws.access_advisor, no "listed" or
# listed "granted") lists every service granted, as above. IAM Access Analyzer's
# unused-access findings (source aws.access_analyzer, listed "unused") list only what went
# unused for more than the analyzer's age (window_days), with tracked_since = as_of minus
# that age: such data speaks only for a window no longer than its window_days (else
# nothing is concluded), and never for the services used, which are then unknown
# (all_granted does not hold): used_services and tracked_action_count are undefined, the
# rules that need them do not fire, and the right-sizing fix does not narrow "*".
#
# Performance: the rules without arguments below read input.resource: OPA computes each
# once per resource, shared by every policy that imports them.

# window_days is the length of the window, in days (setting unused_access_window_days).
window_days := n if {
	n := data.warden.config.unused_access_window_days
} else := 90

# max_listed is how many entries a message lists before "and N more": an administrator
# is granted some 400 services, all in the violation's machine-readable list.
max_listed := 20

principal_kinds := {"aws.iam.user": "user", "aws.iam.role": "role", "aws.iam.group": "group"}

# kind is "user", "role" or "group", for messages; "policy" for a customer-managed
# policy, whose usage (aggregated: true) is that of every principal it is attached to.
kind := principal_kinds[input.resource.type]

kind := "policy" if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.aws_managed == false
	input.resource.attributes.usage.aggregated == true

	# The aggregate needs what each principal used: never from data listing only what is
	# unused (the collector marks such an aggregate incomplete; this is the second lock).
	object.get(input.resource.attributes.usage, "listed", "granted") == "granted"
}

# exempt holds for principals no least-privilege finding should name: service-linked roles
# (their policies belong to the AWS service that created them, which alone may change
# them) and principals tagged warden-least-privilege: exempt.
exempt if input.resource.attributes.service_linked == true

exempt if startswith(object.get(input.resource.attributes, "path", ""), "/aws-service-role/")

exempt if exempt_tags(input.resource.tags)

# A policy is exempt when any principal it is attached to would be: narrowing it narrows
# them all.
exempt if {
	kind == "policy"
	some p in input.resource.attributes.usage.principals
	exempt_principal(p)
}

exempt_principal(p) if p.service_linked == true

exempt_principal(p) if startswith(object.get(p, "path", ""), "/aws-service-role/")

exempt_principal(p) if exempt_value(p.least_privilege_tag)

exempt_tags(tags) if exempt_value(tags["warden-least-privilege"])

exempt_value(v) if {
	is_string(v)
	lower(trim_space(v)) == "exempt"
}

# facts is the usage attribute of a principal that can be judged: complete, with its times
# and services, not exempt, and the principal at least as old as the window (judged).
# Undefined otherwise: then nothing is concluded, and every rule below reading it is
# undefined too (the comprehensions say so explicitly: over nothing, they would be empty).
facts := readable if judged

# readable is the usage attribute when it is complete and has its times and services.
readable := u if {
	kind
	u := input.resource.attributes.usage
	is_object(u)
	u.complete == true
	is_string(u.as_of)
	is_string(u.tracked_since)
	is_array(u.services)
	speaks_for_window(u)
	not exempt
}

# speaks_for_window(u) holds when usage u can speak for the window: data listing every
# service granted, or data listing what is unused for at least the window.
speaks_for_window(u) if object.get(u, "listed", "granted") == "granted"

speaks_for_window(u) if {
	u.listed == "unused"
	is_number(u.window_days)
	u.window_days >= window_days
}

# all_granted holds when the usage lists every service granted (Access Advisor), so that
# the services it shows used are all the services used.
all_granted if object.get(facts, "listed", "granted") == "granted"

as_of_ns := time.parse_rfc3339_ns(readable.as_of)

tracked_since_ns := time.parse_rfc3339_ns(readable.tracked_since)

# window_start_ns is the start of the window ending at as_of. A window of less than a day
# (a setting of 0 or below) judges nothing.
window_start_ns := time.add_date(as_of_ns, 0, 0, 0 - window_days) if {
	is_number(window_days)
	window_days >= 1
}

# judged holds when the principal's usage may be read: the data is there and the principal
# is at least as old as the window. A user or role without a creation time is not judged;
# a group without one (groups may carry none) is judged through tracked_since alone.
judged if {
	principal_kinds[input.resource.type]
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= window_start_ns
}

judged if {
	input.resource.type == "aws.iam.group"
	object.get(input.resource.attributes, "created", null) == null
	window_start_ns
}

# A policy is judged when it and every principal it is attached to are at least as old as
# the window (a group without a creation time aside, as above): a principal attached last
# month has not had the window to use what the policy grants.
judged if {
	kind == "policy"
	created := input.resource.attributes.created
	is_string(created)
	time.parse_rfc3339_ns(created) <= window_start_ns
	every p in readable.principals {
		principal_old_enough(p)
	}
}

principal_old_enough(p) if {
	is_string(p.created)
	time.parse_rfc3339_ns(p.created) <= window_start_ns
}

principal_old_enough(p) if {
	p.type == "aws.iam.group"
	object.get(p, "created", null) == null
}

# evidence(entry) says why a service or action (an object with last_used) counts as
# unused; it is undefined when the entry counts as used. A missing last_used is unknown,
# not never.
evidence(entry) := never_used if {
	entry.last_used == null
	tracked_since_ns <= window_start_ns
} else := sprintf("last used %s, %d days ago", [day(entry.last_used), days]) if {
	is_string(entry.last_used)
	t := time.parse_rfc3339_ns(entry.last_used)
	t <= window_start_ns
	days := floor((as_of_ns - t) / 86400000000000)
}

# never_used says why a service or action without a last use counts as unused.
never_used := sprintf("never used since tracking began on %s", [day(facts.tracked_since)]) if {
	all_granted
} else := sprintf("no use in the %d days IAM Access Analyzer looks back", [facts.window_days])

# unused(entry) holds when evidence(entry) is defined.
unused(entry) if evidence(entry)

# service_name(s) is a service's namespace ("s3"), or its name when the namespace is missing.
service_name(s) := s.service if {
	is_string(s.service)
	s.service != ""
} else := s.name if {
	is_string(s.name)
	s.name != ""
} else := "(unnamed service)"

# unused_services are the granted services unused for the whole window, sorted by name:
# each {"service", "last_used", "evidence"}.
unused_services := [{"service": name, "last_used": s.last_used, "evidence": ev} |
	some [name, i] in sort([[service_name(s), i] | some i, s in facts.services; unused(s)])
	s := facts.services[i]
	ev := evidence(s)
] if facts

# used_services are the names of the granted services that count as used, sorted; known
# only from data listing every service granted (all_granted).
used_services := sort([service_name(s) | some s in facts.services; not unused(s)]) if all_granted

# unused_actions are, in the services that count as used and are tracked per action, the
# granted actions unused for the whole window, sorted: each {"action", "service",
# "last_used", "evidence"}.
unused_actions := [{"action": a.action, "service": service_name(s), "last_used": a.last_used, "evidence": evidence(a)} |
	some [_, i, j] in sort([[a.action, i, j] |
		some i, s in facts.services
		not unused(s)
		some j, a in tracked_actions(s)
		unused(a)
	])
	s := facts.services[i]
	a := tracked_actions(s)[j]
] if facts

# tracked_actions(s) is the action-level data of service s: its actions that name one.
tracked_actions(s) := [a | some a in s.actions; is_object(a); is_string(a.action)] if is_array(s.actions)

# tracked_action_count is the number of actions tracked in the services that count as
# used; known only from data listing every service granted (all_granted).
tracked_action_count := count([1 |
	some s in facts.services
	not unused(s)
	some _ in tracked_actions(s)
]) if all_granted

# listed(items) joins items for a message, the first max_listed of them.
listed(items) := concat(", ", items) if {
	count(items) <= max_listed
} else := sprintf("%s and %d more", [concat(", ", array.slice(items, 0, max_listed)), count(items) - max_listed])

# day(ts) is the date part of an RFC 3339 time, for messages.
day(ts) := substring(ts, 0, 10)

# unused_service_names are the namespaces of the services unused for the whole window,
# lower-case.
unused_service_names := {lower(u.service) | some u in unused_services}

# rightsizing(doc, services) is what a finding about an over-broad grant in doc (an inline
# policy of the principal, or the customer-managed policy) gains from usage: the
# right-sizing fix, its risk (high, as the pack's own right-sizing policies say) and its
# window, when one of services (namespaces, lower-case) went unused for the
# window and the fix would take it out of doc, else {}. The fix removes a service's
# patterns and narrows "*"; it leaves NotAction and patterns whose service part has a
# wildcard, so a document holding either gains nothing (the grant could survive the fix);
# "*" is narrowed only when the services used are known (all_granted), so that with
# Access Analyzer's data a document holding "*" gains nothing either.
rightsizing(doc, services) := {"action": fix, "risk": "high", "window_days": window_days} if {
	fix := rightsizing_fixes[kind]
	some svc in services
	svc in unused_service_names
	rightsizable(doc)
} else := {}

rightsizing_fixes := {
	"user": "aws.iam.rightsize_inline_policy",
	"role": "aws.iam.rightsize_inline_policy",
	"group": "aws.iam.rightsize_inline_policy",
	"policy": "aws.iam.rightsize_managed_policy",
}

rightsizable(doc) if {
	every s in doc_statements(doc) {
		rightsizable_statement(s)
	}
}

rightsizable_statement(s) if s.Effect != "Allow"

rightsizable_statement(s) if {
	s.Effect == "Allow"
	not s.NotAction
	every p in doc_patterns(s.Action) {
		rightsizable_pattern(p)
	}
}

rightsizable_pattern("*") if all_granted

rightsizable_pattern(p) if {
	[svc, _] := split(p, ":")
	not contains(svc, "*")
	not contains(svc, "?")
}

doc_statements(doc) := doc.Statement if is_array(doc.Statement)

doc_statements(doc) := [doc.Statement] if is_object(doc.Statement)

doc_patterns(a) := [a] if is_string(a)

doc_patterns(a) := a if is_array(a)

# rightsizing_paths(doc, paths) is rightsizing(doc, …) for a finding that holds while any
# of paths (lists of actions, "svc:Action") is granted whole, as privilege-escalation
# paths are: the fix is offered only when it breaks every one, each losing a service.
rightsizing_paths(doc, paths) := rightsizing(doc, unused_service_names) if {
	every path in paths {
		some a in path
		lower(split(a, ":")[0]) in unused_service_names
	}
} else := {}
