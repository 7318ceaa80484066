# METADATA
# title: Display helpers
# description: Names of resources and their parts in messages, each with a fallback, so that a cosmetic field never decides whether a violation is reported.
package warden.lib.display

# A message is built only for a violation, and a rule body with an undefined term is
# undefined: a message that reads input.resource.name directly makes the violation vanish
# for a resource without a name. Every name in a message goes through a helper below,
# which falls back to something that is always there (the uid, in the end).

# uid is the uid of the resource being evaluated (the snapshot reader requires one).
uid := u if {
	u := input.resource.uid
	is_string(u)
	u != ""
} else := "(resource without uid)"

# name is the name of the resource being evaluated, or its uid when the name is missing,
# empty or not a string.
name := n if {
	n := input.resource.name
	is_string(n)
	n != ""
} else := uid

# account is the account (AWS) or project (GCP) of the resource being evaluated, or its
# uid when the account is missing.
account := a if {
	a := input.resource.account
	is_string(a)
	a != ""
} else := uid

# attribute(key, fallback) is the attribute key of the resource being evaluated when it is
# a non-empty string, and fallback otherwise.
attribute(key, fallback) := v if {
	v := input.resource.attributes[key]
	is_string(v)
	v != ""
} else := fallback

# field(obj, key, fallback) is obj[key] when obj is an object and obj[key] a non-empty
# string, and fallback otherwise.
field(obj, key, fallback) := v if {
	is_object(obj)
	v := obj[key]
	is_string(v)
	v != ""
} else := fallback

# resource_name(r) is the name of a resource given as an argument, or its uid.
resource_name(r) := field(r, "name", field(r, "uid", "(resource without uid)"))
