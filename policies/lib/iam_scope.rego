# The part of data.warden.lib.iam (its METADATA and the rules it builds on are in iam.rego)
# that says, in messages, what "every resource" means for a grant: a Resource of "*" (or a
# service's wildcard) is every resource, but a resource type's wildcard
# (arn:aws:lambda:eu-west-1:111111111111:function:*) is every function of one region and
# account, and the message names it as such rather than claim more.
package warden.lib.iam

# resources_text(d, actions) says on what document d of input.resource allows the actions
# (names, any case; each allowed on every resource, document_allowed): "every resource"
# when a Resource of "*", a service's wildcard or a NotResource covers each of them, else
# "every resource matching P, Q", the patterns of the unconditional Allow statements that
# cover them (those of a resource type's wildcard, and of the broader ones for the actions
# they cover), sorted.
resources_text(d, actions) := "every resource" if {
	count(typed_only(d, actions)) == 0
} else := sprintf("every resource matching %s", [concat(", ", sort({p |
	some a in {lower(x) | some x in actions}
	some p in covering_patterns(d, a)
}))])

# typed_only(d, actions) is the set of the lower-case actions that document d allows on
# every resource only through the wildcard of a resource type.
typed_only(d, actions) := {a |
	some x in actions
	a := lower(x)
	count(typed_patterns(d, a)) > 0
	not fully_covered(d, a)
}

# fully_covered(d, a) holds when an unconditional Allow of document d applies to every
# resource of action a by a pattern that is not a resource type's wildcard.
fully_covered(d, a) if {
	some f in resource_facts[d]
	f.effect == "Allow"
	facts_match(f, a)
	f.covers_all
} else if {
	some f in resource_facts[d]
	f.effect == "Allow"
	facts_match(f, a)
	some scope in f.resources
	scope.kind == null
	scope_covers(scope, a)
} else if {
	some f in resource_facts[d]
	f.effect == "Allow"
	facts_match(f, a)
	f.statement.NotResource
	not any_scope_covers(f.not_resources, a)
}

# covering_patterns(d, a) is the set of the Resource patterns of the unconditional Allow
# statements of document d that cover every resource of action a.
covering_patterns(d, a) := {r |
	some f in resource_facts[d]
	f.effect == "Allow"
	facts_match(f, a)
	some r in as_list(object.get(f.statement, "Resource", []))
	is_string(r)
	some scope in resource_scopes(r)
	scope_covers(scope, a)
}

# typed_patterns(d, a) is the part of covering_patterns(d, a) that are a resource type's
# wildcard.
typed_patterns(d, a) := {r |
	some f in resource_facts[d]
	f.effect == "Allow"
	facts_match(f, a)
	some r in as_list(object.get(f.statement, "Resource", []))
	is_string(r)
	some scope in resource_scopes(r)
	scope.kind != null
	scope_covers(scope, a)
}
