# The part of data.warden.lib.iam (its METADATA and the rules it builds on are in iam.rego)
# that reads documents again with the conditions of their Allow statements dropped, for
# the policies that do not take a condition as an exemption.
package warden.lib.iam

# Conditional grants ----------------------------------------------------------------------
# A Condition scopes a statement, so the checks of iam.rego read a conditional Allow as no grant.
# For administrator access that is too generous: "*" on "*" only with
# aws:MultiFactorAuthPresent is still full administrator for every MFA session. The rules
# below read the documents again with the conditions of their Allow statements dropped
# (a conditional Deny still takes nothing away), for the policies that report such grants
# (WARDEN-AWS-IAM-039, -017) and name the conditions in their messages.

# conditional_documents is the set of the indexes of the documents of input.resource
# holding a conditional Allow that may apply to every resource (granting_documents' twin,
# written out the same way: every resource pays for it).
conditional_documents contains 0 if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	some s in input.resource.attributes.document.Statement
	s.Effect == "Allow"
	s.Condition
	conditional_grant(s)
}

conditional_documents contains 0 if {
	input.resource.type == "aws.iam.policy"
	input.resource.attributes.attachment_count > 0
	s := input.resource.attributes.document.Statement
	s.Effect == "Allow"
	s.Condition
	conditional_grant(s)
}

conditional_documents contains d if {
	input.resource.type in {"aws.iam.user", "aws.iam.group", "aws.iam.role"}
	some d, p in input.resource.attributes.inline_policies
	some s in p.document.Statement
	s.Effect == "Allow"
	s.Condition
	conditional_grant(s)
}

conditional_documents contains d if {
	input.resource.type in {"aws.iam.user", "aws.iam.group", "aws.iam.role"}
	some d, p in input.resource.attributes.inline_policies
	s := p.document.Statement
	s.Effect == "Allow"
	s.Condition
	conditional_grant(s)
}

conditional_grant(s) if {
	has_condition(s)
	may_cover_all(s)
}

# unconditioned(fs) is the facts fs with the conditions of their Allow statements dropped.
unconditioned(fs) := [unconditioned_fact(f) | some f in fs]

unconditioned_fact(f) := object.union(f, {"conditional": false}) if {
	f.effect == "Allow"
} else := f

# unconditioned_facts[d] is the facts of the statements of conditional document d that may
# apply to every resource, conditions of Allow statements dropped.
unconditioned_facts[d] := unconditioned([f |
	some [d2, i, s] in resource_statements
	d2 == d
	may_cover_all(s)
	f := statement_facts(s, i)
]) if {
	some d in conditional_documents
}

# conditionally_everything_documents is the set of the conditional documents of
# input.resource that allow everything (allows_everything) once their conditions are
# dropped, and not without.
conditionally_everything_documents contains d if {
	some d in conditional_documents
	not d in everything_documents
	facts_everything(unconditioned_facts[d], resource_sources[d].document)
}

# conditionally_allowed(d, by_service) is the set of the actions of by_service that
# conditional document d allows on every resource once its conditions are dropped, and not
# without (document_allowed).
conditionally_allowed(d, by_service) := facts_allowed(unconditioned_facts[d], by_service) - unconditionally if {
	unconditionally := {a | d in granting_documents; some a in document_allowed(d, by_service)}
}

# allows_everything_conditionally(doc) holds when doc allows everything once the
# conditions of its Allow statements are dropped, and not without (allows_everything).
allows_everything_conditionally(doc) if {
	not allows_everything(doc)
	facts_everything(unconditioned(document_facts(doc)), doc)
}

# condition_keys(doc) is the sorted condition keys of the conditional Allow statements of
# doc that may apply to every resource, for messages ("aws:MultiFactorAuthPresent").
condition_keys(doc) := sort({key |
	some s in statements(doc)
	s.Effect == "Allow"
	may_cover_all(s)
	some _, keys in object.get(s, "Condition", {})
	is_object(keys)
	some key, _ in keys
})
