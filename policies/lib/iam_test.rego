package warden.lib.iam_test

import data.warden.lib.iam

doc(statements) := {"Version": "2012-10-17", "Statement": statements}

allow(action, resource) := {"Effect": "Allow", "Action": action, "Resource": resource}

deny(action, resource) := {"Effect": "Deny", "Action": action, "Resource": resource}

# statements ------------------------------------------------------------------------------

test_statements_single_object if {
	iam.statements({"Statement": allow("s3:GetObject", "*")}) == [allow("s3:GetObject", "*")]
}

test_statements_list if {
	count(iam.statements(doc([allow("s3:GetObject", "*"), allow("s3:PutObject", "*")]))) == 2
}

test_statements_absent_or_not_a_document if {
	iam.statements({"Version": "2012-10-17"}) == []
	iam.statements(null) == []
}

# action patterns -------------------------------------------------------------------------

test_pattern_star_anywhere if {
	iam.pattern_matches("*", "iam:PassRole")
	iam.pattern_matches("iam:*", "iam:PassRole")
	iam.pattern_matches("iam:Pass*", "iam:PassRole")
	iam.pattern_matches("iam:*Role", "iam:PassRole")
	iam.pattern_matches("i*:P*Ro*", "iam:PassRole")
	not iam.pattern_matches("iam:Get*", "iam:PassRole")
	not iam.pattern_matches("ia:*", "iam:PassRole")
}

test_pattern_question_mark_is_one_character if {
	iam.pattern_matches("iam:PassRol?", "iam:PassRole")
	iam.pattern_matches("ia?:PassRole", "iam:PassRole")
	not iam.pattern_matches("iam:PassRol?", "iam:PassRol")
	not iam.pattern_matches("iam:PassRo?", "iam:PassRole")
}

test_pattern_is_case_insensitive if {
	iam.pattern_matches("IAM:passrole", "iam:PassRole")
	iam.pattern_matches("iam:passROLE", "IAM:PASSROLE")
}

test_pattern_regex_characters_are_literal if {
	not iam.pattern_matches("iam.PassRole", "iamXPassRole")
	iam.pattern_matches("iam.PassRole", "iam.PassRole")
	not iam.pattern_matches("iam:(Pass|Get)Role", "iam:PassRole")
}

test_pattern_must_match_whole_action if {
	not iam.pattern_matches("iam:Pass", "iam:PassRole")
	not iam.pattern_matches("Role", "iam:PassRole")
}

# matching a statement --------------------------------------------------------------------

test_action_string_or_list if {
	iam.matches_action(allow("iam:PassRole", "*"), "iam:PassRole")
	iam.matches_action(allow(["s3:GetObject", "iam:PassRole"], "*"), "iam:PassRole")
	not iam.matches_action(allow(["s3:GetObject"], "*"), "iam:PassRole")
}

test_not_action_matches_what_it_does_not_name if {
	s := {"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}
	iam.matches_action(s, "ec2:RunInstances")
	not iam.matches_action(s, "iam:PassRole")
	not iam.matches_action(s, "IAM:PASSROLE")
	iam.matches_action({"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}, "iam:PassRole")
}

test_statement_without_action_matches_nothing if {
	not iam.matches_action({"Effect": "Allow", "Resource": "*"}, "iam:PassRole")
}

# resources -------------------------------------------------------------------------------

test_all_resources_patterns if {
	iam.all_resources("*", iam.any_action)
	iam.all_resources("*", "iam:PassRole")
	iam.all_resources("arn:aws:*", iam.any_action)
	iam.all_resources("arn:*", "iam:PassRole")
	iam.all_resources("arn:aws:*:*:*:*", iam.any_action)
	iam.all_resources("arn:aws:iam::*:*", "iam:#")
	iam.all_resources("arn:aws:iam::111111111111:*", "iam:CreatePolicyVersion")
	iam.all_resources("arn:aws:kms:*:111111111111:*", "kms:#")
	iam.all_resources("arn:aws:s3:::*", "s3:GetObject")
}

test_all_resources_of_the_action_type if {
	iam.all_resources("arn:aws:iam::*:role/*", "iam:PassRole")
	iam.all_resources("arn:aws:iam::111111111111:policy/*", "IAM:CreatePolicyVersion")
	iam.all_resources("arn:aws:iam::111111111111:user/*", "iam:CreateAccessKey")
	not iam.all_resources("arn:aws:iam::111111111111:policy/*", "iam:AttachRolePolicy")
	not iam.all_resources("arn:aws:iam::*:role/*", "iam:#")
	not iam.all_resources("arn:aws:iam::*:role/*", "iam:GetRole")
}

test_scoped_resources_are_not_all if {
	not iam.all_resources("arn:aws:iam::*:*", iam.any_action)
	not iam.all_resources("arn:aws:s3:::*", "iam:PassRole")
	not iam.all_resources("arn:aws:iam::*:role/app-*", "iam:PassRole")
	not iam.all_resources("arn:aws:iam::*:role/service-role/*", "iam:PassRole")
	not iam.all_resources("arn:aws:s3:::acme-logs/*", "s3:GetObject")
	not iam.all_resources("arn:aws:kms:eu-west-1:111111111111:key/1234abcd", "kms:Decrypt")
	not iam.all_resources("arn:aws:iam::*:role/?", "iam:PassRole")
}

test_not_resource_covers_all_unless_it_names_all if {
	iam.covers_all_resources({"NotResource": "arn:aws:s3:::secret/*"}, "s3:GetObject")
	iam.covers_all_resources({"NotResource": ["arn:aws:iam::*:role/admin"]}, "iam:PassRole")
	not iam.covers_all_resources({"NotResource": "*"}, "s3:GetObject")
	not iam.covers_all_resources({"NotResource": "arn:aws:iam::*:*"}, "iam:PassRole")
}

test_deny_on_service_resources_carves_the_service_out if {
	d := doc([allow("*", "*"), deny("*", "arn:aws:iam::*:*")])
	not iam.allows_everything(d)
	not iam.allows_action_on_all_resources(d, "iam:PassRole")
	iam.allows_action_on_all_resources(d, "s3:GetObject")
}

# concrete actions on every resource ------------------------------------------------------

test_allows_action_on_all_resources if {
	iam.allows_action_on_all_resources(doc([allow("iam:CreatePolicyVersion", "*")]), "iam:CreatePolicyVersion")
	iam.allows_action_on_all_resources({"Statement": allow("iam:*", "*")}, "iam:CreatePolicyVersion")
	iam.allows_action_on_all_resources(doc([allow("*", "*")]), "iam:CreatePolicyVersion")
}

test_allows_action_lower_case_and_wildcards if {
	iam.allows_action_on_all_resources(doc([allow("iam:createpolicyversion", "*")]), "iam:CreatePolicyVersion")
	iam.allows_action_on_all_resources(doc([allow("iam:Create*", "*")]), "iam:CreatePolicyVersion")
	iam.allows_action_on_all_resources(doc([allow("iam:?reatePolicyVersion", "*")]), "iam:CreatePolicyVersion")
}

test_allows_action_scoped_resource_is_not_all if {
	d := doc([allow("iam:CreatePolicyVersion", "arn:aws:iam::111111111111:policy/app-*")])
	not iam.allows_action_on_all_resources(d, "iam:CreatePolicyVersion")
	iam.allows_action(d, "iam:CreatePolicyVersion")
}

test_allows_action_via_not_action if {
	d := doc([{"Effect": "Allow", "NotAction": ["s3:*", "ec2:*"], "Resource": "*"}])
	iam.allows_action_on_all_resources(d, "iam:PassRole")
	not iam.allows_action_on_all_resources(d, "s3:GetObject")
}

test_allows_action_via_not_resource if {
	d := doc([{"Effect": "Allow", "Action": "iam:PassRole", "NotResource": "arn:aws:iam::*:role/admin"}])
	iam.allows_action_on_all_resources(d, "iam:PassRole")
}

test_allow_with_condition_is_not_a_grant if {
	d := doc([object.union(allow("iam:PassRole", "*"), {"Condition": {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}})])
	not iam.allows_action_on_all_resources(d, "iam:PassRole")
	not iam.allows_action(d, "iam:PassRole")
}

test_empty_condition_does_not_scope if {
	d := doc([object.union(allow("iam:PassRole", "*"), {"Condition": {}})])
	iam.allows_action_on_all_resources(d, "iam:PassRole")
}

test_deny_overrides_allow if {
	d := doc([allow("*", "*"), deny("iam:CreatePolicyVersion", "*")])
	not iam.allows_action_on_all_resources(d, "iam:CreatePolicyVersion")
	iam.allows_action_on_all_resources(d, "iam:PassRole")
}

test_deny_by_wildcard_and_case_overrides_allow if {
	d := doc([allow("iam:CreatePolicyVersion", "*"), deny("IAM:Create*", "*")])
	not iam.allows_action_on_all_resources(d, "iam:CreatePolicyVersion")
}

test_deny_not_action_overrides_what_it_does_not_name if {
	d := doc([allow("*", "*"), {"Effect": "Deny", "NotAction": "s3:*", "Resource": "*"}])
	not iam.allows_action_on_all_resources(d, "iam:PassRole")
	iam.allows_action_on_all_resources(d, "s3:GetObject")
}

test_deny_with_condition_does_not_override if {
	d := doc([
		allow("iam:CreatePolicyVersion", "*"),
		object.union(deny("iam:*", "*"), {"Condition": {"Bool": {"aws:MultiFactorAuthPresent": "false"}}}),
	])
	iam.allows_action_on_all_resources(d, "iam:CreatePolicyVersion")
}

test_deny_on_some_resources_does_not_override if {
	d := doc([allow("iam:PassRole", "*"), deny("iam:PassRole", "arn:aws:iam::*:role/admin")])
	iam.allows_action_on_all_resources(d, "iam:PassRole")
}

test_allows_action_deny_everywhere_overrides if {
	d := doc([allow("lambda:CreateFunction", "arn:aws:lambda:*:*:function:app-*"), deny("lambda:*", "*")])
	not iam.allows_action(d, "lambda:CreateFunction")
}

# services and everything -----------------------------------------------------------------

test_allows_all_actions_of_service if {
	iam.allows_all_actions_of_service(doc([allow("iam:*", "*")]), "iam")
	iam.allows_all_actions_of_service(doc([allow("IAM:*", "*")]), "iam")
	iam.allows_all_actions_of_service(doc([allow(["kms:*"], ["*"])]), "kms")
	iam.allows_all_actions_of_service(doc([allow("*", "*")]), "sts")
	iam.allows_all_actions_of_service(doc([allow("i*", "*")]), "iam")
	iam.allows_all_actions_of_service(doc([allow("kms:*", "arn:aws:kms:*:111111111111:*")]), "kms")
	iam.allows_all_actions_of_service(doc([{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}]), "iam")
}

test_partial_service_is_not_all_actions if {
	not iam.allows_all_actions_of_service(doc([allow("iam:Get*", "*")]), "iam")
	not iam.allows_all_actions_of_service(doc([allow(["iam:Get*", "iam:List*"], "*")]), "iam")
	not iam.allows_all_actions_of_service(doc([allow("kms:*", "arn:aws:kms:eu-west-1:111111111111:key/1234abcd")]), "kms")
	not iam.allows_all_actions_of_service(doc([allow("sts:*", "*")]), "iam")
	not iam.allows_all_actions_of_service(doc([{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]), "iam")
}

test_all_actions_of_service_named_deny_leaves_it_broad if {
	iam.allows_all_actions_of_service(doc([allow("iam:*", "*"), deny("iam:DeleteUser", "*")]), "iam")
}

test_all_actions_of_service_service_deny_overrides if {
	not iam.allows_all_actions_of_service(doc([allow("iam:*", "*"), deny("iam:*", "*")]), "iam")
}

test_allows_everything if {
	iam.allows_everything(doc([allow("*", "*")]))
	iam.allows_everything({"Statement": {"Effect": "Allow", "Action": ["*"], "Resource": ["*"]}})
	iam.allows_everything(doc([allow("*:*", "arn:aws:*:*:*:*")]))
}

test_allows_everything_near_misses if {
	not iam.allows_everything(doc([allow("*", "arn:aws:s3:::*")]))
	not iam.allows_everything(doc([allow("s3:*", "*")]))
	not iam.allows_everything(doc([object.union(allow("*", "*"), {"Condition": {"IpAddress": {"aws:SourceIp": "203.0.113.0/24"}}})]))
	not iam.allows_everything(doc([allow("*", "*"), deny("*", "*")]))
	not iam.allows_everything(doc([allow("*", "*"), {"Effect": "Deny", "NotAction": ["s3:*"], "Resource": "*"}]))
	not iam.allows_everything(doc([{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"}]))
}

test_allows_everything_despite_named_deny if {
	iam.allows_everything(doc([allow("*", "*"), deny("organizations:LeaveOrganization", "*")]))
	iam.allows_everything(doc([allow("*", "*"), deny(["iam:Create*", "iam:Put*"], "*")]))
}

test_whole_service_carved_out_is_not_everything if {
	not iam.allows_everything(doc([allow("*", "*"), deny("iam:*", "*")]))
	not iam.allows_everything(doc([allow("*", "*"), deny("IAM:*", "*")]))
	not iam.allows_everything(doc([{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*"], "Resource": "*"}]))
}

test_everything_from_several_statements if {
	iam.allows_everything(doc([
		{"Effect": "Allow", "NotAction": "iam:*", "Resource": "*"},
		allow("iam:*", "*"),
	]))
}

test_named_services if {
	iam.named_services(doc([
		allow(["s3:GetObject", "IAM:Get*", "*"], "*"),
		{"Effect": "Deny", "NotAction": "kms:*", "Resource": "*"},
		allow("s*:List*", "*"),
		allow("s3:GetObject", ["arn:aws:s3:::acme-logs/*", "arn:aws:dynamodb:*:*:table/x", "arn:aws:*:*:*:*"]),
	])) == {"s3", "iam", "kms", "dynamodb"}
}

test_allows_everything_despite_conditional_deny if {
	iam.allows_everything(doc([
		allow("*", "*"),
		object.union(deny("*", "*"), {"Condition": {"StringNotEquals": {"aws:RequestedRegion": "eu-west-1"}}}),
	]))
}

test_generic_action if {
	iam.generic_action("*") == iam.any_action
	iam.generic_action("s3:Get*") == "s3:get#"
	iam.generic_action("IAM:PassRole") == "iam:passrole"
}

# documents of a resource -----------------------------------------------------------------

admin_doc := doc([allow("*", "*")])

test_documents_of_attached_managed_policy if {
	r := {"type": "aws.iam.policy", "name": "Admin", "attributes": {
		"attachment_count": 2, "document": admin_doc,
		"attached_to": {"users": [], "groups": ["admins"], "roles": ["ops"]},
	}}
	iam.documents(r) == {{"document": admin_doc, "where": "policy Admin (attached to group admins, role ops)"}}
}

test_documents_of_unattached_managed_policy_is_empty if {
	r := {"type": "aws.iam.policy", "name": "Admin", "attributes": {"attachment_count": 0, "document": admin_doc}}
	iam.documents(r) == set()
}

test_documents_attached_without_names if {
	r := {"type": "aws.iam.policy", "name": "Admin", "attributes": {"attachment_count": 3, "document": admin_doc}}
	[src] := [s | some s in iam.documents(r)]
	src.where == "policy Admin (attached 3 times)"
}

test_documents_inline_policies if {
	r := {"type": "aws.iam.role", "name": "ops", "attributes": {"inline_policies": [
		{"name": "a", "document": admin_doc},
		{"name": "b", "document": doc([allow("s3:GetObject", "*")])},
	]}}
	docs := iam.documents(r)
	count(docs) == 2
	{"document": admin_doc, "where": "inline policy a of role ops", "inline_policy": "a"} in docs
}

test_documents_of_other_types_are_empty if {
	iam.documents({"type": "aws.iam.access_key", "name": "k", "attributes": {}}) == set()
	iam.documents({"type": "aws.iam.user", "name": "u", "attributes": {}}) == set()
}

test_violation_fields if {
	managed := {"document": admin_doc, "where": "policy X"}
	inline := {"document": admin_doc, "where": "inline policy p", "inline_policy": "p"}
	iam.violation_fields(managed, "") == {}
	iam.violation_fields(managed, "iam") == {"key": "iam"}
	iam.violation_fields(inline, "") == {"key": "p", "inline_policy": "p"}
	iam.violation_fields(inline, "iam") == {"key": "p/iam", "inline_policy": "p"}
	iam.detach_fields(managed) == {}
	iam.detach_fields(inline) == {"action": "aws.iam.delete_inline_policy"}
}

# trust policies --------------------------------------------------------------------------

trust(principal) := {"Effect": "Allow", "Principal": principal, "Action": "sts:AssumeRole"}

test_principal_forms if {
	iam.principals(trust("*")) == {{"type": "*", "value": "*"}}
	iam.principals(trust({"AWS": "*"})) == {{"type": "AWS", "value": "*"}}
	iam.principals(trust({"AWS": ["arn:aws:iam::123456789012:root", "123456789012"]})) == {
		{"type": "AWS", "value": "arn:aws:iam::123456789012:root"},
		{"type": "AWS", "value": "123456789012"},
	}
	iam.principals(trust({"Service": ["ec2.amazonaws.com", "lambda.amazonaws.com"]})) == {
		{"type": "Service", "value": "ec2.amazonaws.com"},
		{"type": "Service", "value": "lambda.amazonaws.com"},
	}
	iam.principals(trust({"Federated": "arn:aws:iam::111111111111:saml-provider/okta"})) == {{"type": "Federated", "value": "arn:aws:iam::111111111111:saml-provider/okta"}}
}

test_allow_not_principal_is_everyone if {
	iam.principals({"Effect": "Allow", "NotPrincipal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "sts:AssumeRole"}) == {{"type": "*", "value": "*"}}
}

test_trusted_principals if {
	d := doc([
		trust({"Service": "ec2.amazonaws.com"}),
		object.union(trust({"AWS": "222222222222"}), {"Condition": {"StringEquals": {"sts:ExternalId": "x"}}}),
		{"Effect": "Allow", "Principal": {"AWS": "333333333333"}, "Action": "sts:TagSession"},
	])
	iam.trusted_principals(d) == {
		{"type": "Service", "value": "ec2.amazonaws.com", "action": "sts:AssumeRole", "conditional": false},
		{"type": "AWS", "value": "222222222222", "action": "sts:AssumeRole", "conditional": true},
	}
}

test_open_trusts_anyone if {
	count(iam.open_trusts({"Statement": trust("*")})) == 1
	count(iam.open_trusts(doc([trust({"AWS": "*"})]))) == 1
	count(iam.open_trusts(doc([trust({"AWS": ["arn:aws:iam::111111111111:root", "*"]})]))) == 1
	count(iam.open_trusts(doc([{"Effect": "Allow", "Principal": "*", "Action": "STS:ASSUMEROLE"}]))) == 1
}

test_open_trusts_near_misses if {
	iam.open_trusts(doc([trust({"AWS": "arn:aws:iam::111111111111:root"})])) == set()
	iam.open_trusts(doc([object.union(trust("*"), {"Condition": {"StringEquals": {"aws:PrincipalOrgID": "o-abc123"}}})])) == set()
	iam.open_trusts(doc([trust("*"), {"Effect": "Deny", "Principal": "*", "Action": "sts:*"}])) == set()
	iam.open_trusts(doc([trust("*"), {"Effect": "Deny", "NotPrincipal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "sts:AssumeRole"}])) == set()
	iam.open_trusts(doc([{"Effect": "Allow", "Principal": "*", "Action": "sts:TagSession"}])) == set()
}

test_conditional_deny_does_not_close_an_open_trust if {
	d := doc([
		trust("*"),
		{"Effect": "Deny", "Principal": "*", "Action": "sts:AssumeRole", "Condition": {"StringNotEquals": {"aws:PrincipalOrgID": "o-abc123"}}},
	])
	count(iam.open_trusts(d)) == 1
}

web_identity(provider) := {"Effect": "Allow", "Principal": {"Federated": provider}, "Action": "sts:AssumeRoleWithWebIdentity"}

test_open_trusts_public_identity_provider if {
	[p] := [p | some p in iam.open_trusts(doc([web_identity("arn:aws:iam::111111111111:oidc-provider/token.actions.githubusercontent.com")]))]
	p.action == "sts:AssumeRoleWithWebIdentity"
	count(iam.open_trusts(doc([web_identity("cognito-identity.amazonaws.com")]))) == 1
}

test_open_trusts_identity_provider_near_misses if {
	scoped := object.union(
		web_identity("arn:aws:iam::111111111111:oidc-provider/token.actions.githubusercontent.com"),
		{"Condition": {"StringLike": {"token.actions.githubusercontent.com:sub": "repo:acme/*"}}},
	)
	iam.open_trusts(doc([scoped])) == set()
	iam.open_trusts(doc([web_identity("arn:aws:iam::111111111111:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABC")])) == set()
}

test_account_of if {
	iam.account_of("123456789012") == "123456789012"
	iam.account_of("arn:aws:iam::123456789012:root") == "123456789012"
	iam.account_of("arn:aws:iam::123456789012:role/deploy") == "123456789012"
	iam.account_of("arn:aws:sts::123456789012:assumed-role/deploy/ci") == "123456789012"
	iam.account_of("arn:aws-us-gov:iam::123456789012:root") == "123456789012"
	not iam.account_of("*")
	not iam.account_of("AROAEXAMPLEID1234567")
	not iam.account_of("1234567890123")
}

test_trusted_accounts if {
	d := doc([
		trust({"AWS": ["arn:aws:iam::222222222222:root", "arn:aws:iam::222222222222:role/ci"]}),
		object.union(trust({"AWS": "999999999999"}), {"Condition": {"StringEquals": {"sts:ExternalId": "x"}}}),
		trust({"Service": "ec2.amazonaws.com"}),
		trust("*"),
	])
	iam.trusted_accounts(d) == {
		"222222222222": ["arn:aws:iam::222222222222:role/ci", "arn:aws:iam::222222222222:root"],
		"999999999999": ["999999999999"],
	}
}
