# METADATA
# title: IAM policy documents
# description: >-
#   Reads AWS IAM policy documents the way AWS evaluates them: Statement as one object or a
#   list, Action/NotAction and Resource/NotResource as strings or lists, `*` and `?`
#   wildcards, case-insensitive action names, Deny over Allow, Conditions that scope a
#   statement, and the principals of trust policies.
package warden.lib.iam

import data.warden.lib.config
import data.warden.lib.display

# A broad grant is asked about a "generic" action: one that no statement names explicitly.
# `#` appears in no action name, so `iam:#` stands for "any IAM action, including ones added
# later" and `#:#` for "any action of any service". A pattern that matches the generic action
# covers the whole class. Granting "every action" also needs the generic action of every
# service the document names: NotAction ["iam:*"] or a Deny of iam:* carves a whole service
# out, so the grant is no longer every action. A Deny or NotAction naming some actions
# (iam:DeleteUser, iam:Create*) carves them out but leaves the rest of the grant broad.
any_action := "#:#"

# Performance. Warden evaluates every policy of a resource's type in one query, with
# input.resource: rules without arguments over it are computed once per resource and shared
# by the policies, while every rule, function call and builtin costs an evaluation step.
# So the policies start from cheap per-resource rules (see "Documents of input.resource"
# and "Trust policy of input.resource" below) that most resources fail at once: only a
# document with an unconditional Allow whose Resource may name every resource
# (granting_documents) is read further. A statement is then read once into facts
# (statement_facts): its patterns lower-cased and sorted by what matching them takes, the
# scopes of its resource patterns. Actions are asked about in sets grouped by service
# (facts_allowed), so a pattern is compared only with the actions of its own service. The
# functions taking a document (allows_action_on_all_resources, allows_everything…) compute
# the same facts from it and share the deciding functions (facts_*).

# as_list(x) is x when it is a list, [x] when it is a single value, [] when it is absent (null).
as_list(x) := x if {
	is_array(x)
} else := [] if {
	x == null
} else := [x]

# statements(doc) is the list of statements of a policy document.
statements(doc) := as_list(object.get(doc, "Statement", null)) if {
	is_object(doc)
} else := []

# Patterns --------------------------------------------------------------------------------

# pattern_matches(pattern, value) holds when an IAM pattern (`*` any run of characters, `?`
# exactly one) matches value, ignoring case.
pattern_matches(pattern, value) if {
	is_string(pattern)
	lower_matches(lower(pattern), lower(value))
}

# lower_matches(p, v) is pattern_matches for a lower-case pattern and value. The usual forms
# need no regex: a literal is compared, `*` matches anything, `prefix*` is a prefix. Other
# patterns go to glob.match (OPA caches compiled globs; null: no separator), unless they
# hold glob syntax that IAM reads literally ([ ] { } \). A value with a newline, which the
# regex's `.` does not match, always goes to the regex.
lower_matches(p, v) := p == v if {
	not contains(p, "*")
	not contains(p, "?")
} else := regex.match(glob_regex(p), v) if {
	contains(v, "\n")
} else if {
	p == "*"
} else := startswith(v, prefix) if {
	endswith(p, "*")
	prefix := trim_suffix(p, "*")
	not contains(prefix, "*")
	not contains(prefix, "?")
} else := glob.match(p, null, v) if {
	not regex.match(`[\[\]{}\\]`, p)
} else := regex.match(glob_regex(p), v)

any_lower_matches(patterns, value) if {
	some p in patterns
	lower_matches(p, value)
}

glob_regex(pattern) := concat("", ["^", replace(replace(quoted, `\*`, ".*"), `\?`, "."), "$"]) if {
	quoted := regex.replace(pattern, `[\\.+*?()|\[\]{}^$]`, `\$0`)
}

# service_of(action) is the lower-case service prefix of an action ("iam" for "IAM:PassRole").
service_of(action) := lower(split(action, ":")[0])

# has_condition(s) is true when a statement carries a non-empty Condition, false otherwise.
has_condition(s) if {
	count(object.get(s, "Condition", {})) > 0
} else := false

# Statement facts -------------------------------------------------------------------------

# statement_facts(s, i) is what the checks need of statement s (at index i), read once:
#   statement     s itself; effect: its Effect; conditional: has_condition(s)
#   actions, not_actions: its Action and NotAction patterns (action_patterns)
#   resources, not_resources: the scopes (resource_scopes) of its Resource, NotResource
#   covers_all    whether it applies to every resource of every action (Resource "*", or
#                 NotResource naming no whole service): then no scope needs looking at
# It is undefined for a statement that is not an object (which applies to nothing).
# METADATA
# custom:
#   memo: true
statement_facts(s, i) := {
	"index": i,
	"statement": s,
	"effect": object.get(s, "Effect", null),
	"conditional": has_condition(s),
	"actions": action_patterns(object.get(s, "Action", null)),
	"not_actions": action_patterns(object.get(s, "NotAction", null)),
	"resources": resources,
	"not_resources": not_resources,
	"covers_all": covers_all(s, resources, not_resources),
} if {
	resources := pattern_scopes(object.get(s, "Resource", null))
	not_resources := pattern_scopes(object.get(s, "NotResource", null))
}

# action_patterns(x) sorts the patterns of as_list(x) (its strings, lower-cased; "all") by
# what matching them takes (pattern_kind), each kind present a list of [service, argument]:
#   any      the patterns of only stars: they match every action
#   wild     those whose service (the part before the first ":") holds a wildcard
#   literal, prefix, pattern: the others, with their service (prefix: with the part before
#            the final star); such a pattern is literal up to its first ":", so it can only
#            match the actions of its service.
# METADATA
# custom:
#   memo: true
action_patterns(null) := {"all": []}

action_patterns(x) := object.union({"all": patterns}, {kind: [[svc, arg] | [kind, svc, arg] = kinds[_]] |
	some kind in {t[0] | some t in kinds}
}) if {
	x != null
	patterns := [lower(p) | some p in as_list(x); is_string(p)]
	kinds := [pattern_kind(p) | some p in patterns]
}

# pattern_kind(p) is [kind, service, argument] for a lower-case pattern (see action_patterns).
pattern_kind(p) := ["literal", split(p, ":")[0], p] if {
	not contains(p, "*")
	not contains(p, "?")
} else := ["any", "", p] if {
	trim(p, "*") == "" # only stars, since p holds a wildcard
} else := ["wild", "", p] if {
	regex.match(`^[^:]*[*?]`, p)
} else := ["prefix", split(p, ":")[0], prefix] if {
	endswith(p, "*")
	prefix := trim_suffix(p, "*")
	not contains(prefix, "*")
	not contains(prefix, "?")
} else := ["pattern", split(p, ":")[0], p]

# pattern_scopes(x) is the scopes of the resource patterns of as_list(x).
pattern_scopes(x) := [scope | some r in as_list(x); is_string(r); some scope in resource_scopes(r)]

covers_all(s, resources, not_resources) if {
	some scope in resources
	scope.service == null
	scope.kind == null
} else if {
	s.NotResource
	count(not_resources) == 0
} else := false

# action_facts(s) is the part of statement_facts(s, _) that facts_matched reads.
action_facts(s) := {
	"statement": s,
	"actions": action_patterns(object.get(s, "Action", null)),
	"not_actions": action_patterns(object.get(s, "NotAction", null)),
}

# document_facts(doc) is the facts of every statement of doc. The same document comes
# back in many resources (AWS-managed policies in every account, templates), so the engine
# computes it once per distinct document.
# METADATA
# custom:
#   memo: true
document_facts(doc) := [f | some i, s in statements(doc); f := statement_facts(s, i)]

# Actions are asked about in sets, "by service": an object {service: [lower-case actions]}
# listing each action under its service, the part before its first ":" ({"iam": ["iam:#",
# "iam:passrole"], "#": ["#:#"]}), none with a newline (see lower_matches; single actions
# with one take the exact path of facts_match). one_action(action) is the set of one action.
one_action(action) := {split(action, ":")[0]: [action]}

# facts_matched(f, by_service) is the set of the actions of by_service that the statement of
# facts f applies to: one of its Action patterns matches the action, or it has NotAction and
# none of its NotAction patterns does.
# METADATA
# custom:
#   memo: true
facts_matched(f, by_service) := patterns_matched(f.actions, by_service) | not_action_matched(f, by_service)

# patterns_matched(patterns, by_service) is the set of the actions of by_service (without a
# newline) that one of action_patterns matches.
patterns_matched(patterns, by_service) := set() if {
	count(patterns.all) == 0
} else := {action |
	some actions in by_service
	some action in actions
} if {
	patterns.any
} else := (({p |
	some [svc, p] in patterns.literal
	p in by_service[svc]
} | {action |
	some [svc, prefix] in patterns.prefix
	some action in by_service[svc]
	startswith(action, prefix)
}) | {action |
	some [svc, p] in patterns.pattern
	some action in by_service[svc]
	lower_matches(p, action)
}) | {action |
	some [_, p] in patterns.wild
	some actions in by_service
	some action in actions
	lower_matches(p, action)
}

not_action_matched(f, by_service) := all - patterns_matched(f.not_actions, by_service) if {
	f.statement.NotAction
	all := {action | some actions in by_service; some action in actions}
} else := set()

# facts_cover(f, action) holds when the statement of facts f applies to every resource that
# the lower-case action can act on. Resource must hold a pattern covering them all;
# NotResource applies to everything it does not name, so it covers all unless it names them
# all itself.
facts_cover(f, action) if {
	f.covers_all
} else if {
	some scope in f.resources
	scope_covers(scope, action)
} else if {
	f.statement.NotResource
	not any_scope_covers(f.not_resources, action)
}

any_scope_covers(scopes, action) if {
	some scope in scopes
	scope_covers(scope, action)
}

# facts_allowed(fs, by_service) is the set of the actions of by_service that the document of
# facts fs allows on every resource: an unconditional Allow applies to the action on every
# resource, and no unconditional Deny does.
# METADATA
# custom:
#   memo: true
facts_allowed(fs, by_service) := granted - facts_denied_among(fs, by_service, granted) if {
	granted := {action |
		some f in fs
		f.effect == "Allow"
		not f.conditional
		f.covers_all
		some action in facts_matched(f, by_service)
	} | {action |
		some f in fs
		f.effect == "Allow"
		not f.conditional
		not f.covers_all
		some action in facts_matched(f, by_service)
		facts_cover(f, action)
	}
}

# facts_allowed_somewhere(fs, by_service) is the set of the actions of by_service that the
# document of facts fs unconditionally allows on some resource, and no unconditional Deny
# takes away on every resource.
facts_allowed_somewhere(fs, by_service) := granted - facts_denied_everywhere_among(fs, by_service, granted) if {
	granted := {action |
		some f in fs
		f.effect == "Allow"
		not f.conditional
		some action in facts_matched(f, by_service)
	}
}

# facts_denied_among(fs, by_service, actions) is the set of the actions (of by_service and
# actions) that an unconditional Deny of the document of facts fs takes away everywhere.
facts_denied_among(fs, by_service, actions) := set() if {
	count(actions) == 0
} else := {action |
	some f in fs
	f.effect == "Deny"
	not f.conditional
	some action in facts_matched(f, by_service)
	action in actions
	facts_cover(f, action)
}

# facts_denied_everywhere_among(fs, by_service, actions) is the set of the actions (of
# by_service and actions) that an unconditional Deny of the document of facts fs takes
# away on every resource, leaving none where an Allow could act (facts_cover_everywhere).
facts_denied_everywhere_among(fs, by_service, actions) := set() if {
	count(actions) == 0
} else := {action |
	some f in fs
	f.effect == "Deny"
	not f.conditional
	some action in facts_matched(f, by_service)
	action in actions
	facts_cover_everywhere(f, action)
}

# facts_cover_everywhere(f, action) holds when the statement of facts f applies to every
# resource the lower-case action can be asked on, strictly: Resource "*" (stars only), or
# an ARN pattern naming every resource of the action's service. Stricter than facts_cover,
# which answers whether the action is still allowed on *every* resource: for that, a Deny
# with NotResource (everything but what it names) or on "*/*" (every ARN holding a "/")
# takes the "every" away; for whether the action is allowed *somewhere*, such a Deny leaves
# the resources it does not reach (arn:aws:s3:::data), where an Allow still acts.
facts_cover_everywhere(f, action) if {
	some r in as_list(object.get(f.statement, "Resource", null))
	is_string(r)
	trim(r, "*") == ""
} else if {
	some r in as_list(object.get(f.statement, "Resource", null))
	is_string(r)
	startswith(lower(r), "arn:")
	some scope in resource_scopes(r)
	scope_covers(scope, action)
}

facts_denied_everywhere(fs, action) if {
	some f in fs
	f.effect == "Deny"
	not f.conditional
	facts_match(f, action)
	facts_cover_everywhere(f, action)
}

# The same for one lower-case action. facts_apply(f, action): the statement of facts f is
# unconditional and applies to action on every resource.
facts_match(f, action) if {
	not contains(action, "\n")
	action in facts_matched(f, one_action(action))
}

facts_match(f, action) if {
	contains(action, "\n")
	some p in f.actions.all
	lower_matches(p, action)
}

facts_match(f, action) if {
	contains(action, "\n")
	f.statement.NotAction
	not any_lower_matches(f.not_actions.all, action)
}

facts_apply(f, action) if {
	not f.conditional
	facts_match(f, action)
	facts_cover(f, action)
}

facts_denied(fs, action) if {
	some f in fs
	f.effect == "Deny"
	facts_apply(f, action)
}

facts_allow(fs, action) if {
	not contains(action, "\n")
	action in facts_allowed(fs, one_action(action))
}

facts_allow(fs, action) if {
	contains(action, "\n")
	some f in fs
	f.effect == "Allow"
	facts_apply(f, action)
	not facts_denied(fs, action)
}

facts_allow_somewhere(fs, action) if {
	not contains(action, "\n")
	action in facts_allowed_somewhere(fs, one_action(action))
}

facts_allow_somewhere(fs, action) if {
	contains(action, "\n")
	some f in fs
	f.effect == "Allow"
	not f.conditional
	facts_match(f, action)
	not facts_denied_everywhere(fs, action)
}

# facts_everything(fs, doc): doc (of facts fs) allows every action of every service on every
# resource: the generic action, and the generic action of each service the document names.
# An unconditional Allow of "*" on every resource without any unconditional Deny allows
# them all, whatever the services (unless one holds a newline, see lower_matches). A service
# that an Allow's NotAction names (svc:*, svc:Get*…) is named by the document: when its
# generic action is not allowed, the others need no looking at.
facts_everything(fs, doc) if {
	some f in fs
	f.effect == "Allow"
	not f.conditional
	f.actions.any
	f.covers_all
	not unconditional_deny(fs)
	not contains(json.marshal(doc), `\n`)
} else := false if {
	some f in fs
	f.effect == "Allow"
	f.statement.NotAction
	some [svc, p] in array.concat(f.not_actions.prefix, f.not_actions.literal)
	contains(p, ":") # named_services
	svc != ""
	not facts_allow(fs, concat(":", [svc, "#"]))
} else if {
	facts_allow(fs, any_action)
	services := named_services(doc)
	plain := {svc | some svc in services; not contains(svc, "\n")}
	count(facts_allowed(fs, {svc: [concat(":", [svc, "#"])] | some svc in plain})) == count(plain)
	every svc in services - plain {
		facts_allow(fs, concat(":", [svc, "#"]))
	}
}

unconditional_deny(fs) if {
	some f in fs
	f.effect == "Deny"
	not f.conditional
}

# facts_broadly_grant(fs, f): the statement of facts f (of a document of facts fs) is an
# unconditional Allow of what its Action or NotAction stands for (generic actions) on every
# resource, and no unconditional Deny takes it away. NotAction stands for every action of
# every service it does not name.
facts_broadly_grant(fs, f) if {
	f.effect == "Allow"
	f.statement.NotAction
	facts_apply(f, any_action)
	not facts_denied(fs, any_action)
}

facts_broadly_grant(fs, f) if {
	f.effect == "Allow"
	some pattern in as_list(object.get(f.statement, "Action", null))
	action := generic_action(pattern)
	facts_apply(f, action)
	not facts_denied(fs, action)
}

# Resources -------------------------------------------------------------------------------

# all_resources(r, action) holds when the resource pattern r names every resource that action
# can act on: "*", or an ARN of the action's service (any service for the generic "#:#")
# whose resource part is only wildcards (arn:aws:iam::*:*, arn:aws:iam::111111111111:*,
# arn:aws:*). Neither the account nor the region is a scope: a policy acts in its own
# account, and every resource of a region is as many as an escalation needs. For the
# actions of resource_types, the wildcard of the resource type they act on also names them
# all: arn:aws:iam::*:role/* for iam:PassRole,
# arn:aws:lambda:eu-west-1:111111111111:function:* for lambda:UpdateFunctionCode,
# arn:aws:ec2:*:*:instance/* for ssm:SendCommand. A path or name prefix (role/app-*,
# function:prod-*) or a name is a scope: it covers only some of them.
all_resources(r, action) if {
	some scope in resource_scopes(r)
	scope_covers(scope, lower(action))
}

# resource_scopes(r) is the set of scopes in which the resource pattern r (a string) names
# every resource, each {"service", "service_wildcard", "kind"}: it names every resource of
# the actions whose service the pattern "service" matches (null: every action, the generic
# "#:#" included; "#:#" needs a service of wildcards only, "service_wildcard") and, when
# "kind" is not null, that act on the resource type kind of that service (resource_types). A pattern that names every resource
# of no action (almost all of them: most name a bucket, a key, a path) has no scope; a
# regex tells them apart before any splitting.
resource_scopes(r) := {{"service": null, "service_wildcard": true, "kind": null}} if {
	r == "*"
} else := {scope |
	some scope in broad_resource_scopes(r, lower(r))
} if {
	regex.match(broad_resource, lower(r))
} else := set()

# broad_resource matches (lower-cased) the patterns that have a scope: wildcards only; an
# ARN of six parts or more whose resource part is wildcards only or the wildcard of a
# resource type of resource_types (role/*, function:*); a shorter ARN whose last part is
# wildcards only.
broad_resource := `^(?:[*/:]*\*[*/:]*|arn:[^:]*:[^:]*:[^:]*:[^:]*:(?:[*/:]*\*[*/:]*|(?:group|role|user|policy|function|instance|launch-template|devendpoint|stack|project|task|notebook-instance|notebook-instance-lifecycle-config|service|statemachine)[/:]\*+)|arn(?::[^:]*){0,3}:[*/]*\*[*/]*)$`

broad_resource_scopes(r, _) := {{"service": null, "service_wildcard": true, "kind": null}} if {
	wildcards_only(r)
}

broad_resource_scopes(_, lr) := {{"service": parts[2], "service_wildcard": is_wildcards(parts[2]), "kind": kind}} if {
	parts := split(lr, ":")
	count(parts) >= 6
	parts[0] == "arn"
	kind := resource_part_kind(concat(":", array.slice(parts, 5, count(parts))))
}

broad_resource_scopes(_, lr) := {scope} if {
	parts := split(lr, ":")
	n := count(parts)
	n < 6
	parts[0] == "arn"
	wildcards_only(parts[n - 1])
	scope := short_arn_scope(parts)
}

short_arn_scope(parts) := {"service": null, "service_wildcard": true, "kind": null} if {
	count(parts) <= 3
} else := {"service": parts[2], "service_wildcard": is_wildcards(parts[2]), "kind": null}

# resource_part_kind(part) is null when the resource part of an ARN names every resource of
# its service, the (lower-case) resource type when it names every resource of a type of
# resource_types (role/*, function:*).
resource_part_kind(part) := null if {
	wildcards_only(part)
} else := kind if {
	regex.match(`^(?:group|role|user|policy|function|instance|launch-template|devendpoint|stack|project|task|notebook-instance|notebook-instance-lifecycle-config|service|statemachine)[/:]\*+$`, part)
	kind := regex.split(`[/:]`, part)[0]
}

# scope_covers(scope, action) holds when a scope of resource_scopes covers every resource of
# the lower-case action.
scope_covers(scope, _) if {
	scope.service == null
	scope.kind == null
}

scope_covers(scope, action) if {
	scope.service != null
	scope.kind == null
	service_covered(scope, action)
}

# A kind is a resource type of the service that resource_types names, whatever the action's
# (sts:AssumeRole acts on IAM roles, ssm:SendCommand on EC2 instances).
scope_covers(scope, action) if {
	scope.kind != null
	[service, kind] := resource_types[action]
	kind == scope.kind
	lower_matches(scope.service, service)
}

service_covered(scope, _) if scope.service == null

service_covered(scope, action) if {
	action == any_action
	scope.service_wildcard
}

service_covered(scope, action) if {
	action != any_action
	lower_matches(scope.service, service_of(action))
}

wildcards_only(s) if regex.match(`^[*/:]*\*[*/:]*$`, s)

is_wildcards(s) if {
	wildcards_only(s)
} else := false

# resource_types maps the lower-case actions that act on existing resources of one type,
# among those the pack asks about on every resource (the escalation paths, sts:AssumeRole),
# to [service, type]: the service and the lower-case resource type of the ARNs of those
# resources, whose wildcard (arn:aws:lambda:*:*:function:*) names them all. An action that
# acts on several types is listed with the one that holds the role it reaches (ssm:SendCommand
# runs on an EC2 instance; its document is AWS's). An action not listed (ec2:DescribeInstances,
# which takes no resource, the bedrock-agentcore, batch, codedeploy and sso paths) is on
# every resource only on "*" or a wildcard of its service.
resource_types := {
	"apprunner:updateservice": ["apprunner", "service"],
	"cloudformation:createchangeset": ["cloudformation", "stack"],
	"cloudformation:executechangeset": ["cloudformation", "stack"],
	"cloudformation:updatestack": ["cloudformation", "stack"],
	"codebuild:startbuild": ["codebuild", "project"],
	"codebuild:startbuildbatch": ["codebuild", "project"],
	"ec2-instance-connect:sendsshpublickey": ["ec2", "instance"],
	"ec2:createlaunchtemplateversion": ["ec2", "launch-template"],
	"ec2:modifyinstanceattribute": ["ec2", "instance"],
	"ec2:modifylaunchtemplate": ["ec2", "launch-template"],
	"ec2:startinstances": ["ec2", "instance"],
	"ec2:stopinstances": ["ec2", "instance"],
	"ecs:describetasks": ["ecs", "task"],
	"ecs:executecommand": ["ecs", "task"],
	"glue:updatedevendpoint": ["glue", "devendpoint"],
	"iam:addusertogroup": ["iam", "group"],
	"iam:attachgrouppolicy": ["iam", "group"],
	"iam:attachrolepolicy": ["iam", "role"],
	"iam:attachuserpolicy": ["iam", "user"],
	"iam:createaccesskey": ["iam", "user"],
	"iam:createloginprofile": ["iam", "user"],
	"iam:createpolicyversion": ["iam", "policy"],
	"iam:deleterolepermissionsboundary": ["iam", "role"],
	"iam:deleteuserpermissionsboundary": ["iam", "user"],
	"iam:passrole": ["iam", "role"],
	"iam:putgrouppolicy": ["iam", "group"],
	"iam:putrolepolicy": ["iam", "role"],
	"iam:putuserpermissionsboundary": ["iam", "user"],
	"iam:putuserpolicy": ["iam", "user"],
	"iam:setdefaultpolicyversion": ["iam", "policy"],
	"iam:updateassumerolepolicy": ["iam", "role"],
	"iam:updateloginprofile": ["iam", "user"],
	"lambda:updatefunctioncode": ["lambda", "function"],
	"lambda:updatefunctionconfiguration": ["lambda", "function"],
	"sagemaker:createnotebookinstancelifecycleconfig": ["sagemaker", "notebook-instance-lifecycle-config"],
	"sagemaker:createpresignednotebookinstanceurl": ["sagemaker", "notebook-instance"],
	"sagemaker:startnotebookinstance": ["sagemaker", "notebook-instance"],
	"sagemaker:stopnotebookinstance": ["sagemaker", "notebook-instance"],
	"sagemaker:updatenotebookinstance": ["sagemaker", "notebook-instance"],
	"ssm:sendcommand": ["ec2", "instance"],
	"ssm:startsession": ["ec2", "instance"],
	"states:startexecution": ["states", "statemachine"],
	"states:updatestatemachine": ["states", "statemachine"],
	"sts:assumerole": ["iam", "role"],
}

# Statements and documents ----------------------------------------------------------------

# matches_action(s, action) holds when statement s applies to action (concrete or generic).
matches_action(s, action) if facts_match(statement_facts(s, 0), lower(action))

# covers_all_resources(s, action) holds when statement s applies to every resource that
# action can act on (see facts_cover).
covers_all_resources(s, action) if facts_cover(statement_facts(s, 0), lower(action))

# statement_grants(s, action) holds when s is an unconditional Allow of action on every
# resource. A Condition scopes a statement, so a conditional Allow is not a grant.
statement_grants(s, action) if {
	f := statement_facts(s, 0)
	f.effect == "Allow"
	facts_apply(f, lower(action))
}

# denied(doc, action) holds when an unconditional Deny takes action away on every resource.
# A Deny with a Condition only sometimes applies, so it does not override.
denied(doc, action) if facts_denied(document_facts(doc), lower(action))

# allows_action_on_all_resources(doc, action) holds when doc allows action (concrete, e.g.
# "iam:CreatePolicyVersion", or generic) on every resource, after Deny.
allows_action_on_all_resources(doc, action) if facts_allow(document_facts(doc), lower(action))

# allows_action(doc, action) holds when doc unconditionally allows action on some resource
# and no unconditional Deny takes it away everywhere.
allows_action(doc, action) if facts_allow_somewhere(document_facts(doc), lower(action))

# allows_all_actions_of_service(doc, svc) holds when doc allows every action of svc
# (svc:*, *, NotAction naming other services…) on every resource of svc.
allows_all_actions_of_service(doc, svc) if allows_action_on_all_resources(doc, concat(":", [lower(svc), "#"]))

# allows_everything(doc) holds when doc allows every action of every service on every
# resource: the generic action, and the generic action of each service the document names.
allows_everything(doc) if facts_everything(document_facts(doc), doc)

# named_services(doc) is the set of services that doc names without a wildcard: in the
# prefix of its Action or NotAction patterns, or in the ARNs of its Resource or NotResource.
named_services(doc) := {lower(split(pattern, ":")[0]) | # service_of
	some s in statements(doc)
	some key in ["Action", "NotAction"]
	some pattern in as_list(object.get(s, key, null))
	is_string(pattern)
	regex.match(`^[^:*?]+:`, pattern)
} | {lower(parts[2]) |
	some s in statements(doc)
	some key in ["Resource", "NotResource"]
	some pattern in as_list(object.get(s, key, null))
	is_string(pattern)
	parts := split(pattern, ":")
	count(parts) > 3
	regex.match(`^[^*?]+$`, parts[2])
}

# broadly_grants(doc, s) holds when statement s of doc is an unconditional Allow of what its
# Action or NotAction stands for (generic actions) on every resource, and no unconditional
# Deny takes it away. NotAction stands for every action of every service it does not name.
broadly_grants(doc, s) if facts_broadly_grant(document_facts(doc), statement_facts(s, 0))

# generic_action(pattern) stands for the actions a pattern names that no other statement
# names explicitly: iam:Get* becomes iam:get#, * becomes #:#.
generic_action(pattern) := any_action if {
	wildcards_only(pattern)
} else := regex.replace(lower(pattern), `[*?]+`, "#")

# Documents in effect on a resource ------------------------------------------------------

principal_types := {"aws.iam.user", "aws.iam.group", "aws.iam.role"}

# documents(r) is the set of policy documents in effect on resource r, each
# {"document", "where" (names it in messages), "inline_policy" (inline only)}:
# the default version of a managed policy that is attached somewhere, and the inline
# policies of users, groups and roles.
documents(r) := {object.union(src, {"where": where_of(r, src)}) | some src in sources(r)}

# sources(r) is the list of the policy documents in effect on resource r, as documents(r)
# without "where", which only violations need.
sources(r) := [{"document": r.attributes.document} | r.attributes.attachment_count > 0] if {
	r.type == "aws.iam.policy"
} else := [{"document": p.document, "inline_policy": inline_name(object.get(p, "name", null), i)} |
	some i, p in object.get(r.attributes, "inline_policies", [])
] if {
	r.type in principal_types
} else := []

# inline_name(name, i) is the name of the inline policy at position i of inline_policies,
# or "#i" when it has none: a policy without a name is still read (its violations are still
# reported, and keyed by position), never skipped. It takes the name, not the policy, so
# that calling it does not hash the whole document.
inline_name(name, i) := name if {
	is_string(name)
	name != ""
} else := sprintf("#%d", [i])

# where_of(r, src) names the document src of resource r in messages.
where_of(r, src) := sprintf("inline policy %s of %s %s", [src.inline_policy, split(r.type, ".")[2], display.resource_name(r)]) if {
	r.type in principal_types
} else := managed_where(r)

managed_where(r) := sprintf("policy %s (attached to %s)", [display.resource_name(r), concat(", ", attachments)]) if {
	attachments := [sprintf("%s %s", [kind, name]) |
		some plural, kind in {"users": "user", "groups": "group", "roles": "role"}
		some name in object.get(object.get(r.attributes, "attached_to", {}), plural, [])
	]
	count(attachments) > 0
} else := sprintf("policy %s (attached %d times)", [display.resource_name(r), r.attributes.attachment_count])

# violation_fields(src, cause) identifies a violation within the resource: the cause for a
# managed policy (omitted when empty), "<inline name>/<cause>" for an inline policy, which it
# also names in the details.
violation_fields(src, cause) := {"key": cause} if {
	not src.inline_policy
	cause != ""
} else := {} if {
	not src.inline_policy
} else := {"key": src.inline_policy, "inline_policy": src.inline_policy} if {
	cause == ""
} else := {"key": concat("/", [src.inline_policy, cause]), "inline_policy": src.inline_policy}

# Documents of input.resource, once per resource ----------------------------------------
# Every rule below is computed once per resource and shared by the policies. They are
# written for the common case first: a document that names its resources must cost as few
# evaluation steps as possible (no function call, no helper rule, literal regexes), since
# most documents of most resources grant nothing on every resource.

# resource_sources[d] is the source of document d of input.resource (sources(r), keyed by
# position: 0 for a managed policy, the position in inline_policies for an inline one), for
# violation_fields and where.
resource_sources := {0: {"document": input.resource.attributes.document}} if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
} else := {d: {"document": p.document, "inline_policy": inline_name(object.get(p, "name", null), d)} |
	some d, p in object.get(input.resource.attributes, "inline_policies", [])
} if {
	input.resource.type in principal_types
} else := {}

# where(src) names a source of input.resource in messages.
where(src) := where_of(input.resource, src)

# resource_statements is the list of [d, i, s]: statement s, at index i of document d of
# input.resource (statements(doc) of each document of resource_sources, written out).
resource_statements := [[0, i, s] | some i, s in input.resource.attributes.document.Statement] if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	is_array(input.resource.attributes.document.Statement)
} else := [[0, 0, s]] if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	s := input.resource.attributes.document.Statement
	is_object(s)
} else := array.concat(
	[[d, i, s] |
		some d, p in input.resource.attributes.inline_policies
		list := p.document.Statement
		is_array(list)
		some i, s in list
	],
	[[d, 0, s] |
		some d, p in input.resource.attributes.inline_policies
		s := p.document.Statement
		is_object(s)
	],
) if {
	input.resource.type in principal_types
} else := []

# granting_documents is the set of the indexes of the documents of input.resource that hold
# an unconditional Allow that may apply to every resource of some action (may_cover_all):
# the only ones that can allow an action on every resource. Every resource pays for it, so
# it reads input.resource directly, in one body per document kind (managed, inline) and
# Statement form (a list, or one statement; iterating the values of one statement instead
# can only add a document, which resource_facts then reads exactly).
granting_documents contains 0 if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	some s in input.resource.attributes.document.Statement
	s.Effect == "Allow"
	may_cover_all(s)
	not has_condition(s)
}

granting_documents contains 0 if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	s := input.resource.attributes.document.Statement
	s.Effect == "Allow"
	may_cover_all(s)
	not has_condition(s)
}

granting_documents contains d if {
	input.resource.type in {"aws.iam.user", "aws.iam.group", "aws.iam.role"}
	some d, p in input.resource.attributes.inline_policies
	some s in p.document.Statement
	s.Effect == "Allow"
	may_cover_all(s)
	not has_condition(s)
}

granting_documents contains d if {
	input.resource.type in {"aws.iam.user", "aws.iam.group", "aws.iam.role"}
	some d, p in input.resource.attributes.inline_policies
	s := p.document.Statement
	s.Effect == "Allow"
	may_cover_all(s)
	not has_condition(s)
}

# resource_facts[d] is the facts of the unconditional statements of granting document d that
# may apply to every resource of some action (may_cover_all). The others can neither grant
# nor deny anything on every resource.
resource_facts[d] := [f |
	some [d2, i, s] in resource_statements
	d2 == d
	may_cover_all(s)
	not has_condition(s)
	f := statement_facts(s, i)
] if {
	some d in granting_documents
}

# may_cover_all(s) holds when statement s may apply to every resource of some action: it has
# NotResource, or a Resource pattern that broad_resource matches, ignoring case (a Resource
# that names every resource of an action has a scope: resource_scopes). The regex is
# broad_resource_ci, written out: a rule costs an evaluation per resource.
may_cover_all(s) if {
	r := s.Resource
	is_string(r)
	regex.match(`(?i)^(?:[*/:]*\*[*/:]*|arn:[^:]*:[^:]*:[^:]*:[^:]*:(?:[*/:]*\*[*/:]*|(?:group|role|user|policy|function|instance|launch-template|devendpoint|stack|project|task|notebook-instance|notebook-instance-lifecycle-config|service|statemachine)[/:]\*+)|arn(?::[^:]*){0,3}:[*/]*\*[*/]*)$`, r)
}

may_cover_all(s) if {
	some r in s.Resource
	is_string(r)
	regex.match(`(?i)^(?:[*/:]*\*[*/:]*|arn:[^:]*:[^:]*:[^:]*:[^:]*:(?:[*/:]*\*[*/:]*|(?:group|role|user|policy|function|instance|launch-template|devendpoint|stack|project|task|notebook-instance|notebook-instance-lifecycle-config|service|statemachine)[/:]\*+)|arn(?::[^:]*){0,3}:[*/]*\*[*/]*)$`, r)
}

may_cover_all(s) if s.NotResource

broad_resource_ci := concat("", ["(?i)", broad_resource])

# document_allowed(d, by_service) is the set of the actions of by_service (see one_action)
# that document d of input.resource allows on every resource, after Deny
# (allows_action_on_all_resources).
document_allowed(d, by_service) := facts_allowed(resource_facts[d], by_service)

# document_allowed_somewhere(d, by_service) is the set of the actions of by_service that
# document d of input.resource allows on some resource (allows_action): facts_allowed_somewhere
# on its unconditional Allow statements, whose resources do not matter, and on the Deny
# statements of resource_facts[d], the only ones that can deny on every resource.
document_allowed_somewhere(d, by_service) := granted - facts_denied_everywhere_among(resource_facts[d], by_service, granted) if {
	granted := {action |
		some [d2, _, s] in resource_statements
		d2 == d
		s.Effect == "Allow"
		may_match(s, by_service)
		not has_condition(s)
		some action in facts_matched(action_facts(s), by_service)
	}
}

# may_match(s, by_service) holds unless no Action pattern of statement s can match an action
# of by_service (its service is not one of them, and holds no wildcard) and s has no
# NotAction.
may_match(s, _) if s.NotAction

may_match(s, by_service) if {
	some p in as_list(object.get(s, "Action", null))
	is_string(p)
	by_service[lower(split(p, ":")[0])]
}

may_match(s, _) if {
	some p in as_list(object.get(s, "Action", null))
	is_string(p)
	regex.match(`^[^:]*[*?]`, p)
}

# everything_documents is the set of the indexes of the documents of input.resource that
# allow everything (allows_everything).
everything_documents contains d if {
	some d in granting_documents
	facts_everything(resource_facts[d], resource_sources[d].document)
}

# negated_grants[d] is the facts of the statements of document d of input.resource that use
# NotAction or NotResource and broadly grant (broadly_grants).
negated_grants[d] := [f |
	some f in resource_facts[d]
	f.effect == "Allow"
	negated(f.statement)
	facts_broadly_grant(resource_facts[d], f)
] if {
	some d in granting_documents
}

negated(s) if s.NotAction

negated(s) if s.NotResource

# Trust policies --------------------------------------------------------------------------

assume_actions := ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoleWithSAML"]

# assumed_actions(s) is the set of the assume_actions that statement s applies to
# (matches_action), matched all at once; at once too for the usual Action naming one of
# them, without NotAction.
assumed_actions(s) := {action} if {
	is_string(s.Action)
	not s.NotAction
	action := {
		"sts:assumerole": "sts:AssumeRole",
		"sts:assumerolewithwebidentity": "sts:AssumeRoleWithWebIdentity",
		"sts:assumerolewithsaml": "sts:AssumeRoleWithSAML",
	}[lower(s.Action)]
} else := {action |
	some action in assume_actions
	lower(action) in matched
} if {
	matched := facts_matched(action_facts(s), {"sts": ["sts:assumerole", "sts:assumerolewithwebidentity", "sts:assumerolewithsaml"]})
}

# Web identity providers whose identities anyone can obtain: trusting one without a
# Condition (aud, sub) lets anyone with an account there assume the role.
public_identity_providers := {
	"accounts.google.com",
	"app.terraform.io",
	"cognito-identity.amazonaws.com",
	"gitlab.com",
	"graph.facebook.com",
	"token.actions.githubusercontent.com",
	"www.amazon.com",
}

# public_provider_names: the lower-case Federated values that name a public provider bare
# or as a bare oidc-provider path.
public_provider_names := public_identity_providers | {concat("", ["oidc-provider/", host]) | some host in public_identity_providers}

# principals(s) is the set of {"type", "value"} a statement's Principal names; "*" is
# {"type": "*", "value": "*"}. An Allow with NotPrincipal trusts everyone but the named, so
# it counts as "*".
principals(s) := {{"type": "*", "value": "*"}} if {
	s.Principal == "*"
} else := {{"type": "*", "value": "*"}} if {
	s.Effect == "Allow"
	s.NotPrincipal
} else := {{"type": kind, "value": value} |
	principal := object.get(s, "Principal", {})
	is_object(principal)
	some kind, values in principal
	some value in as_list(values)
}

# trusted_principals(doc) is the set of principals that an Allow statement of a trust policy
# lets assume the role, each {"type", "value", "action", "conditional"}.
trusted_principals(doc) := {object.union(p, {"action": action, "conditional": has_condition(s)}) |
	some s in statements(doc)
	s.Effect == "Allow"
	some action in assumed_actions(s)
	some p in principals(s)
}

# public_principal(p) holds for a principal that is anyone: "*" or {"AWS": "*"}.
public_principal(p) if p.value == "*"

# public_identity_provider(p) holds for a Federated principal naming a public web identity
# provider, bare or as an oidc-provider ARN.
public_identity_provider(p) if {
	p.type == "Federated"
	lower(p.value) in public_provider_names
}

public_identity_provider(p) if {
	p.type == "Federated"
	parts := split(lower(p.value), ":oidc-provider/")
	count(parts) > 1
	parts[count(parts) - 1] in public_identity_providers
}

# open_trusts(doc) is the set of trusted principals that let anyone assume the role: public
# principals and public identity providers, trusted without a Condition and not taken away
# by an unconditional Deny of the same action to everyone (Principal "*" or NotPrincipal).
# (trusted_principals, filtered; the principal is looked at before the actions, since most
# trust policies name no open principal.)
open_trusts(doc) := {object.union(p, {"action": action, "conditional": false}) |
	some s in statements(doc)
	s.Effect == "Allow"
	some p in principals(s)
	open_principal(p)
	not has_condition(s)
	some action in assumed_actions(s)
	not denied_to_everyone(doc, action)
}

open_principal(p) if p.value == "*" # public_principal

open_principal(p) if public_identity_provider(p)

denied_to_everyone(doc, action) if {
	some s in statements(doc)
	s.Effect == "Deny"
	not has_condition(s)
	action in assumed_actions(s)
	denies_everyone(s)
}

denies_everyone(s) if s.NotPrincipal

denies_everyone(s) if {
	some p in principals(s)
	public_principal(p)
}

# account_of(value) is the 12-digit account of an AWS principal: an IAM or STS ARN
# (arn:aws:iam::123456789012:root, …:role/x, arn:aws:sts::…:assumed-role/…) or a bare id.
account_of(value) := value if {
	regex.match(`^[0-9]{12}$`, value)
} else := account if {
	[_, account] := regex.find_all_string_submatch_n(`^arn:aws[a-z-]*:(?:iam|sts)::([0-9]{12}):`, value, 1)[0]
}

# trusted_accounts(doc) maps each account a trust policy trusts to the sorted principals that
# name it, whatever their conditions (a Condition such as sts:ExternalId narrows who in that
# account may assume the role; it does not change which account is trusted).
trusted_accounts(doc) := accounts if {
	named := {[account, p.value] |
		some p in trusted_principals(doc)
		p.type == "AWS"
		account := account_of(p.value)
	}
	accounts := {account: sort({pair[1] | some pair in named; pair[0] == account}) | some [account, _] in named}
}

# Trust policy of input.resource, once per resource ---------------------------------------
# Most trust policies name a service, or an account of the organisation: the rules below
# tell so from the Allow statements (a list, or one statement) at the cost of a few lookups.
# (may_trust_anyone, a mere filter, may look at the values of one statement as statements.)

# may_trust_anyone holds unless no Allow statement of the trust policy of input.resource
# names "*" (as Principal or as a value), a Federated principal or a NotPrincipal, one of
# which an open principal needs.
may_trust_anyone if {
	some s in input.resource.attributes.assume_role_policy.Statement
	s.Effect == "Allow"
	may_be_open(s)
}

may_trust_anyone if {
	s := input.resource.attributes.assume_role_policy.Statement
	s.Effect == "Allow"
	may_be_open(s)
}

may_be_open(s) if s.Principal == "*"

may_be_open(s) if s.NotPrincipal

may_be_open(s) if s.Principal.Federated

may_be_open(s) if "*" in s.Principal

may_be_open(s) if {
	some values in s.Principal
	is_array(values)
	"*" in values
}

# resource_open_trusts is open_trusts(<the trust policy of input.resource>).
resource_open_trusts := open_trusts(object.get(input.resource.attributes, "assume_role_policy", {}))

# foreign_trusts is the set of [account, principal] of the trust policy of input.resource
# (trusted_accounts) for the accounts other than the role's own. A principal that names the
# own account as arn:aws:iam::<own>:… is skipped before it is parsed, and the actions of a
# statement are looked at only for the others.
foreign_trusts contains [account, value] if {
	list := input.resource.attributes.assume_role_policy.Statement
	is_array(list)
	some s in list
	s.Effect == "Allow"
	not s.NotPrincipal # then principals(s) is everyone
	some value in as_list(s.Principal.AWS)
	account := foreign_account(s, value)
}

foreign_trusts contains [account, value] if {
	s := input.resource.attributes.assume_role_policy.Statement
	s.Effect == "Allow"
	not s.NotPrincipal
	some value in as_list(s.Principal.AWS)
	account := foreign_account(s, value)
}

# own_principal(value, own) holds for arn:aws:iam::<own>:…, whose account is own (or that
# names no account when own is not an account id).
own_principal(value, own) if startswith(value, concat("", ["arn:aws:iam::", own, ":"]))

# foreign_account(s, value) is the account of the AWS principal value of the Allow statement
# s, when it is not the own account and s applies to an assume action.
foreign_account(s, value) := account if {
	# a role without an account trusts no account as its own
	own := object.get(input.resource, "account", "")
	not own_principal(value, own)
	account := account_of(value)
	account != own
	count(assumed_actions(s)) > 0
}

# known_account(account) holds for the accounts a role may trust without a finding: the
# role's own, the accounts the snapshot covers (input.snapshot.accounts, which warden fills
# with the snapshot's own accounts), and the setting known_accounts, whose ids may be
# written as strings or numbers.
known_account(account) if account == input.resource.account

known_account(account) if account in object.get(input, ["snapshot", "accounts"], [])

known_account(account) if {
	some value in config.setting("known_accounts", [])
	account_id(value) == account
}

account_id(value) := value if is_string(value)

account_id(value) := sprintf("%012d", [value]) if is_number(value)

# unknown_trusts is the set of [account, principal] of foreign_trusts whose account is not
# a known account.
unknown_trusts contains [account, value] if {
	some [account, value] in foreign_trusts
	not known_account(account)
}
