# METADATA
# title: IAM policy documents
# description: >-
#   Reads AWS IAM policy documents the way AWS evaluates them: Statement as one object or a
#   list, Action/NotAction and Resource/NotResource as strings or lists, `*` and `?`
#   wildcards, case-insensitive action names, Deny over Allow, Conditions that scope a
#   statement, and the principals of trust policies.
package warden.lib.iam

# A broad grant is asked about a "generic" action: one that no statement names explicitly.
# `#` appears in no action name, so `iam:#` stands for "any IAM action, including ones added
# later" and `#:#` for "any action of any service". A pattern that matches the generic action
# covers the whole class. Granting "every action" also needs the generic action of every
# service the document names: NotAction ["iam:*"] or a Deny of iam:* carves a whole service
# out, so the grant is no longer every action. A Deny or NotAction naming some actions
# (iam:DeleteUser, iam:Create*) carves them out but leaves the rest of the grant broad.
any_action := "#:#"

# Performance. Warden evaluates every policy of a resource's type in one query, so rules
# without arguments over input.resource (resource_sources, resource_facts,
# granting_documents, everything_documents) are computed once per resource and shared by
# WARDEN-AWS-IAM-001 to -004. Each statement is read once into "facts" (statement_facts):
# lower-cased patterns grouped by service, and the scopes its resource patterns name. Only
# the statements that can apply to every resource are kept per resource, so a document
# without a broad grant costs one pass over its statements. The functions taking a document
# (allows_action_on_all_resources, allows_everything…) compute the same facts from it and
# share the deciding functions (facts_*) with the per-resource rules.

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
lower_matches(p, v) := equal(p, v) if {
	not contains(p, "*")
	not contains(p, "?")
} else := regex.match(glob_regex(p), v) if {
	contains(v, "\n")
} else := true if {
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
#   statement   s itself; effect: its Effect; conditional: has_condition(s)
#   actions     its Action patterns, lower-cased
#   wild        those whose service (the part before the first ":") holds a wildcard: they
#               may match an action of any service
#   named       the others as [service, pattern]: they match only actions of that service
#   services    the set of those services
#   not_actions its NotAction patterns, lower-cased
#   resources, not_resources: the scopes (resource_scopes) of its Resource, NotResource
# It is undefined for a statement that is not an object (which applies to nothing).
statement_facts(s, i) := {
	"index": i,
	"statement": s,
	"effect": object.get(s, "Effect", null),
	"conditional": has_condition(s),
	"actions": actions,
	"wild": [p | some p in actions; wild_service(p)],
	"named": named,
	"services": {svc | some [svc, _] in named},
	"not_actions": lower_strings(object.get(s, "NotAction", null)),
	"resources": pattern_scopes(object.get(s, "Resource", null)),
	"not_resources": pattern_scopes(object.get(s, "NotResource", null)),
} if {
	actions := lower_strings(object.get(s, "Action", null))
	named := [[svc, p] | some p in actions; not wild_service(p); svc := split(p, ":")[0]]
}

# lower_strings(x) is the strings of as_list(x), lower-cased: the patterns of a field.
lower_strings(x) := [lower(p) | some p in as_list(x); is_string(p)]

# wild_service(p) holds when the service part of pattern p holds a wildcard. A pattern whose
# service part has none can only match actions of that service: it is literal up to the ":".
wild_service(p) if regex.match(`^[^:]*[*?]`, p)

# document_facts(doc) is the facts of every statement of doc.
document_facts(doc) := [f | some i, s in statements(doc); f := statement_facts(s, i)]

# facts_match(f, action) holds when the statement of facts f applies to the lower-case action
# (concrete or generic). Only the patterns of the action's service, or of a wildcard service,
# can match it.
facts_match(f, action) if {
	some p in f.wild
	lower_matches(p, action)
}

facts_match(f, action) if {
	svc := split(action, ":")[0]
	svc in f.services
	some [svc, p] in f.named
	lower_matches(p, action)
}

facts_match(f, action) if {
	f.statement.NotAction
	not any_lower_matches(f.not_actions, action)
}

# facts_cover(f, action) holds when the statement of facts f applies to every resource that
# the lower-case action can act on. Resource must hold a pattern covering them all;
# NotResource applies to everything it does not name, so it covers all unless it names them
# all itself.
facts_cover(f, action) if {
	some scope in f.resources
	scope_covers(scope, action)
}

facts_cover(f, action) if {
	f.statement.NotResource
	not any_scope_covers(f.not_resources, action)
}

any_scope_covers(scopes, action) if {
	some scope in scopes
	scope_covers(scope, action)
}

# facts_apply(f, action): the statement of facts f is unconditional and applies to the
# lower-case action on every resource.
facts_apply(f, action) if {
	not f.conditional
	facts_match(f, action)
	facts_cover(f, action)
}

# facts_denied(fs, action): an unconditional Deny among the facts fs (of one document) takes
# the lower-case action away on every resource.
facts_denied(fs, action) if {
	some f in fs
	f.effect == "Deny"
	facts_apply(f, action)
}

# facts_allow(fs, action): the document of facts fs allows the lower-case action on every
# resource, after Deny.
facts_allow(fs, action) if {
	some f in fs
	f.effect == "Allow"
	facts_apply(f, action)
	not facts_denied(fs, action)
}

# facts_allow_somewhere(fs, action): the document of facts fs unconditionally allows the
# lower-case action on some resource and no unconditional Deny takes it away everywhere.
facts_allow_somewhere(fs, action) if {
	some f in fs
	f.effect == "Allow"
	not f.conditional
	facts_match(f, action)
	not facts_denied(fs, action)
}

# facts_everything(fs, doc): doc (of facts fs) allows every action of every service on every
# resource: the generic action, and the generic action of each service the document names.
facts_everything(fs, doc) if {
	facts_allow(fs, any_action)
	every svc in named_services(doc) {
		facts_allow(fs, concat(":", [svc, "#"]))
	}
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
# arn:aws:*). The account is not a scope: a policy acts in its own account. For the IAM
# actions of iam_resource_types, the wildcard of their resource type also names them all
# (arn:aws:iam::*:role/* for iam:PassRole). A path or name prefix (role/app-*) is a scope.
all_resources(r, action) if {
	some scope in resource_scopes(r)
	scope_covers(scope, lower(action))
}

# resource_scopes(r) is the set of scopes in which the resource pattern r (a string) names
# every resource, each {"service", "service_wildcard", "kind"}: it names every resource of
# the actions whose service the pattern "service" matches (null: every action, the generic
# "#:#" included; "#:#" needs a service of wildcards only, "service_wildcard") and, when
# "kind" is not null, whose iam_resource_types is kind. A pattern that names every resource
# of no action (almost all of them: most name a bucket, a key, a path) has no scope; a
# regex tells them apart before any splitting.
resource_scopes(r) := {scope |
	some scope in broad_resource_scopes(r, lower(r))
} if {
	regex.match(broad_resource, lower(r))
} else := set()

# broad_resource matches (lower-cased) the patterns that have a scope: wildcards only; an
# ARN of six parts or more whose resource part is wildcards only or an IAM resource type's
# wildcard; a shorter ARN whose last part is wildcards only.
broad_resource := `^(?:[*/:]*\*[*/:]*|arn:[^:]*:[^:]*:[^:]*:[^:]*:(?:[*/:]*\*[*/:]*|(?:group|role|user|policy)/\*+)|arn(?::[^:]*){0,3}:[*/]*\*[*/]*)$`

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
# its service, the IAM resource type when it names every resource of that type (role/*).
resource_part_kind(part) := null if {
	wildcards_only(part)
} else := kind if {
	regex.match(`^(?:group|role|user|policy)/\*+$`, part)
	kind := split(part, "/")[0]
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

scope_covers(scope, action) if {
	scope.kind != null
	iam_resource_types[action] == scope.kind
	service_covered(scope, action)
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

# iam_resource_types maps IAM actions that act on one resource type to that type.
iam_resource_types := {
	"iam:addusertogroup": "group",
	"iam:attachgrouppolicy": "group",
	"iam:attachrolepolicy": "role",
	"iam:attachuserpolicy": "user",
	"iam:createaccesskey": "user",
	"iam:createloginprofile": "user",
	"iam:createpolicyversion": "policy",
	"iam:passrole": "role",
	"iam:putgrouppolicy": "group",
	"iam:putrolepolicy": "role",
	"iam:putuserpolicy": "user",
	"iam:setdefaultpolicyversion": "policy",
	"iam:updateassumerolepolicy": "role",
	"iam:updateloginprofile": "user",
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
named_services(doc) := {service_of(pattern) |
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
} else := [{"document": p.document, "inline_policy": p.name} |
	some p in object.get(r.attributes, "inline_policies", [])
] if {
	r.type in principal_types
} else := []

# where_of(r, src) names the document src of resource r in messages.
where_of(r, src) := sprintf("inline policy %s of %s %s", [src.inline_policy, split(r.type, ".")[2], r.name]) if {
	r.type in principal_types
} else := managed_where(r)

managed_where(r) := sprintf("policy %s (attached to %s)", [r.name, concat(", ", attachments)]) if {
	attachments := [sprintf("%s %s", [kind, name]) |
		some plural, kind in {"users": "user", "groups": "group", "roles": "role"}
		some name in object.get(object.get(r.attributes, "attached_to", {}), plural, [])
	]
	count(attachments) > 0
} else := sprintf("policy %s (attached %d times)", [r.name, r.attributes.attachment_count])

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

# detach_fields(src) redirects the fix of an inline policy: it is deleted, not detached.
detach_fields(src) := {"action": "aws.iam.delete_inline_policy"} if {
	src.inline_policy
} else := {}

# Documents of input.resource, once per resource ----------------------------------------
# Policies iterate the documents by index d: resource_sources[d] is the source (for
# violation_fields, detach_fields and where), resource_facts[d] the facts of its statements
# that can apply to every resource.

# resource_sources is sources(input.resource).
resource_sources := sources(input.resource)

# where(src) names a source of input.resource in messages.
where(src) := where_of(input.resource, src)

# resource_facts[d] is the facts of the unconditional statements of document d that may
# apply to every resource of some action: with NotResource, or a Resource pattern that has
# a scope. The others can neither grant nor deny anything on every resource.
resource_facts := [[f |
	some i, s in statements(src.document)
	not has_condition(s)
	may_cover_all(s)
	f := statement_facts(s, i)
] | some src in resource_sources]

may_cover_all(s) if s.NotResource

may_cover_all(s) if {
	some r in as_list(object.get(s, "Resource", null))
	is_string(r)
	regex.match(broad_resource, lower(r))
}

# granting_documents is the set of the indexes of the documents of input.resource that hold
# an unconditional Allow on every resource of some action: the only ones that can allow an
# action on every resource.
granting_documents contains d if {
	some d, fs in resource_facts
	some f in fs
	f.effect == "Allow"
}

# document_allows(d, action) holds when document d of input.resource allows the lower-case
# action on every resource, after Deny (allows_action_on_all_resources).
document_allows(d, action) if facts_allow(resource_facts[d], action)

# document_allows_somewhere(d, action) is allows_action for document d of input.resource.
document_allows_somewhere(d, action) if {
	facts_allow_somewhere(document_facts(resource_sources[d].document), action)
}

# everything_documents is the set of the indexes of the documents of input.resource that
# allow everything (allows_everything).
everything_documents contains d if {
	some d in granting_documents
	facts_everything(resource_facts[d], resource_sources[d].document)
}

# negated_grants is the set of [d, f]: facts f of a statement of document d of
# input.resource that uses NotAction or NotResource and broadly grants (broadly_grants).
negated_grants contains [d, f] if {
	some d in granting_documents
	some f in resource_facts[d]
	f.effect == "Allow"
	negated(f.statement)
	facts_broadly_grant(resource_facts[d], f)
}

negated(s) if s.NotAction

negated(s) if s.NotResource

# Trust policies --------------------------------------------------------------------------

assume_actions := ["sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoleWithSAML"]

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
trusted_principals(doc) := {object.union(p, {"action": action, "conditional": f.conditional}) |
	some i, s in statements(doc)
	s.Effect == "Allow"
	f := statement_facts(s, i)
	some action in assume_actions
	facts_match(f, lower(action))
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
open_trusts(doc) := {p |
	some p in trusted_principals(doc)
	not p.conditional
	open_principal(p)
	not denied_to_everyone(doc, p.action)
}

open_principal(p) if public_principal(p)

open_principal(p) if public_identity_provider(p)

denied_to_everyone(doc, action) if {
	some s in statements(doc)
	s.Effect == "Deny"
	not has_condition(s)
	matches_action(s, action)
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
	accounts := {account: sort({value | some [account, value] in named}) | some [account, _] in named}
}
