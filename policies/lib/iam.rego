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

# pattern_matches(pattern, value) holds when an IAM pattern (`*` any run of characters, `?`
# exactly one) matches value, ignoring case.
pattern_matches(pattern, value) if {
	is_string(pattern)
	regex.match(glob_regex(lower(pattern)), lower(value))
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

# matches_action(s, action) holds when statement s applies to action (concrete or generic).
matches_action(s, action) if {
	some pattern in as_list(object.get(s, "Action", null))
	pattern_matches(pattern, action)
}

matches_action(s, action) if {
	s.NotAction
	not any_pattern_matches(as_list(s.NotAction), action)
}

any_pattern_matches(patterns, value) if {
	some pattern in patterns
	pattern_matches(pattern, value)
}

# covers_all_resources(s, action) holds when statement s applies to every resource that
# action can act on. Resource must hold a pattern covering them all; NotResource applies to
# everything it does not name, so it covers all unless it names them all itself.
covers_all_resources(s, action) if {
	some r in as_list(object.get(s, "Resource", null))
	all_resources(r, action)
}

covers_all_resources(s, action) if {
	s.NotResource
	not some_all_resources(as_list(s.NotResource), action)
}

some_all_resources(patterns, action) if {
	some r in patterns
	all_resources(r, action)
}

# all_resources(r, action) holds when the resource pattern r names every resource that action
# can act on: "*", or an ARN of the action's service (any service for the generic "#:#")
# whose resource part is only wildcards (arn:aws:iam::*:*, arn:aws:iam::111111111111:*,
# arn:aws:*). The account is not a scope: a policy acts in its own account. For the IAM
# actions of iam_resource_types, the wildcard of their resource type also names them all
# (arn:aws:iam::*:role/* for iam:PassRole). A path or name prefix (role/app-*) is a scope.
all_resources(r, _) if wildcards_only(r)

all_resources(r, action) if {
	parts := split(lower(r), ":")
	count(parts) >= 6
	parts[0] == "arn"
	service_covered(parts[2], action)
	resource_part_all(concat(":", array.slice(parts, 5, count(parts))), action)
}

all_resources(r, action) if {
	parts := split(lower(r), ":")
	n := count(parts)
	n < 6
	parts[0] == "arn"
	wildcards_only(parts[n - 1])
	short_service_covered(parts, action)
}

short_service_covered(parts, _) if count(parts) <= 3

short_service_covered(parts, action) if {
	count(parts) > 3
	service_covered(parts[2], action)
}

service_covered(part, action) if {
	action == any_action
	wildcards_only(part)
}

service_covered(part, action) if {
	action != any_action
	pattern_matches(part, service_of(action))
}

resource_part_all(part, _) if wildcards_only(part)

resource_part_all(part, action) if {
	kind := iam_resource_types[lower(action)]
	regex.match(sprintf(`^%s/\*+$`, [kind]), part)
}

wildcards_only(s) if regex.match(`^[*/:]*\*[*/:]*$`, s)

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

# statement_grants(s, action) holds when s is an unconditional Allow of action on every
# resource. A Condition scopes a statement, so a conditional Allow is not a grant.
statement_grants(s, action) if {
	s.Effect == "Allow"
	not has_condition(s)
	matches_action(s, action)
	covers_all_resources(s, action)
}

# denied(doc, action) holds when an unconditional Deny takes action away on every resource.
# A Deny with a Condition only sometimes applies, so it does not override.
denied(doc, action) if {
	some s in statements(doc)
	s.Effect == "Deny"
	not has_condition(s)
	matches_action(s, action)
	covers_all_resources(s, action)
}

# allows_action_on_all_resources(doc, action) holds when doc allows action (concrete, e.g.
# "iam:CreatePolicyVersion", or generic) on every resource, after Deny.
allows_action_on_all_resources(doc, action) if {
	some s in statements(doc)
	statement_grants(s, action)
	not denied(doc, action)
}

# allows_action(doc, action) holds when doc unconditionally allows action on some resource
# and no unconditional Deny takes it away everywhere.
allows_action(doc, action) if {
	some s in statements(doc)
	s.Effect == "Allow"
	not has_condition(s)
	matches_action(s, action)
	not denied(doc, action)
}

# allows_all_actions_of_service(doc, svc) holds when doc allows every action of svc
# (svc:*, *, NotAction naming other services…) on every resource of svc.
allows_all_actions_of_service(doc, svc) if allows_action_on_all_resources(doc, concat(":", [lower(svc), "#"]))

# allows_everything(doc) holds when doc allows every action of every service on every
# resource: the generic action, and the generic action of each service the document names.
allows_everything(doc) if {
	allows_action_on_all_resources(doc, any_action)
	every svc in named_services(doc) {
		allows_all_actions_of_service(doc, svc)
	}
}

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
broadly_grants(doc, s) if {
	s.NotAction
	statement_grants(s, any_action)
	not denied(doc, any_action)
}

broadly_grants(doc, s) if {
	some pattern in as_list(object.get(s, "Action", null))
	action := generic_action(pattern)
	statement_grants(s, action)
	not denied(doc, action)
}

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
documents(r) := managed | inline if {
	managed := {{"document": r.attributes.document, "where": managed_where(r)} |
		r.type == "aws.iam.policy"
		r.attributes.attachment_count > 0
	}
	inline := {src |
		r.type in principal_types
		some p in object.get(r.attributes, "inline_policies", [])
		src := {
			"document": p.document,
			"where": sprintf("inline policy %s of %s %s", [p.name, split(r.type, ".")[2], r.name]),
			"inline_policy": p.name,
		}
	}
}

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
	some action in assume_actions
	matches_action(s, action)
	some p in principals(s)
}

# public_principal(p) holds for a principal that is anyone: "*" or {"AWS": "*"}.
public_principal(p) if p.value == "*"

# public_identity_provider(p) holds for a Federated principal naming a public web identity
# provider, bare or as an oidc-provider ARN.
public_identity_provider(p) if {
	p.type == "Federated"
	some host in public_identity_providers
	lower(p.value) in {host, sprintf("oidc-provider/%s", [host])}
}

public_identity_provider(p) if {
	p.type == "Federated"
	some host in public_identity_providers
	endswith(lower(p.value), sprintf(":oidc-provider/%s", [host]))
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
trusted_accounts(doc) := {account: sort(names) |
	some p in trusted_principals(doc)
	p.type == "AWS"
	account := account_of(p.value)
	names := {q.value |
		some q in trusted_principals(doc)
		q.type == "AWS"
		account_of(q.value) == account
	}
}
