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

# A resource type's wildcard, in an account, a region or all, covers what acts on that type
# (an escalation reaches every function of the region); a name or prefix covers only some.
test_all_resources_of_a_type if {
	iam.all_resources("arn:aws:lambda:eu-west-1:111111111111:function:*", "lambda:UpdateFunctionCode")
	iam.all_resources("arn:aws:lambda:*:*:function:*", "lambda:UpdateFunctionConfiguration")
	iam.all_resources("arn:aws:ec2:*:*:instance/*", "ec2:StartInstances")
	iam.all_resources("arn:aws:ec2:*:*:instance/*", "ssm:SendCommand") # it runs on the instance
	iam.all_resources("arn:aws:ec2:us-east-1:111111111111:instance/*", "ec2-instance-connect:SendSSHPublicKey")
	iam.all_resources("arn:aws:glue:eu-west-1:111111111111:devEndpoint/*", "glue:UpdateDevEndpoint")
	iam.all_resources("arn:aws:states:*:111111111111:stateMachine:*", "states:StartExecution")
	iam.all_resources("arn:aws:cloudformation:*:*:stack/*", "cloudformation:UpdateStack")
	iam.all_resources("arn:aws:codebuild:*:*:project/*", "codebuild:StartBuild")
	iam.all_resources("ARN:AWS:LAMBDA:*:*:FUNCTION:**", "lambda:UpdateFunctionCode")
}

test_some_resources_of_a_type if {
	not iam.all_resources("arn:aws:lambda:eu-west-1:111111111111:function:prod-*", "lambda:UpdateFunctionCode")
	not iam.all_resources("arn:aws:lambda:eu-west-1:111111111111:function:orders-api", "lambda:UpdateFunctionCode")
	not iam.all_resources("arn:aws:lambda:*:*:function:*prod", "lambda:UpdateFunctionCode")
	not iam.all_resources("arn:aws:ec2:*:*:instance/i-0123456789abcdef0", "ssm:SendCommand")
	not iam.all_resources("arn:aws:ec2:*:*:instance/*", "ec2:CreateLaunchTemplateVersion") # another type
	not iam.all_resources("arn:aws:ec2:*:*:instance/*", "ec2:DescribeInstances") # takes no resource
	not iam.all_resources("arn:aws:lambda:*:*:function:*", "lambda:#") # not every lambda action
	not iam.all_resources("arn:aws:lambda:*:*:function:*", "lambda:InvokeFunction") # not asked
	not iam.all_resources("arn:aws:s3:::function/*", "lambda:UpdateFunctionCode") # a bucket
	not iam.all_resources("arn:aws:ssm:*:*:instance/*", "ssm:SendCommand") # instances are EC2's
	not iam.all_resources("arn:aws:lambda:*:*:layer:*", "lambda:UpdateFunctionCode")
}

# The types broad_resource knows are those of resource_types, and no other.
test_broad_resource_types_are_resource_types if {
	types := {t | some [_, t] in iam.resource_types}
	every t in types {
		regex.match(iam.broad_resource, sprintf("arn:aws:x:::%s/*", [t]))
	}
	every t in {"bucket", "key", "layer", "alias", "table"} {
		not regex.match(iam.broad_resource, sprintf("arn:aws:x:::%s/*", [t]))
	}
}

test_all_resources_of_the_action_type if {
	iam.all_resources("arn:aws:iam::*:role/*", "iam:PassRole")
	iam.all_resources("arn:aws:iam::111111111111:policy/*", "IAM:CreatePolicyVersion")
	iam.all_resources("arn:aws:iam::111111111111:user/*", "iam:CreateAccessKey")
	not iam.all_resources("arn:aws:iam::111111111111:policy/*", "iam:AttachRolePolicy")
	not iam.all_resources("arn:aws:iam::*:role/*", "iam:#")
	not iam.all_resources("arn:aws:iam::*:role/*", "iam:GetRole")
	iam.all_resources("arn:aws:iam::*:role/*", "sts:AssumeRole") # sts acts on IAM roles
	iam.all_resources("arn:aws:iam::*:user/*", "iam:PutUserPermissionsBoundary")
	not iam.all_resources("arn:aws:sts::*:role/*", "sts:AssumeRole")
	not iam.all_resources("arn:aws:iam::*:user/*", "sts:AssumeRole")
	not iam.all_resources("arn:aws:iam::*:role/*", "sts:GetCallerIdentity")
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

test_documents_without_names_are_still_read if {
	# A nameless inline policy is named by its position, a nameless resource by its uid: a
	# cosmetic field never hides a document.
	r := {"type": "aws.iam.role", "uid": "arn:aws:iam::111111111111:role/ops", "attributes": {"inline_policies": [
		{"name": "", "document": doc([allow("s3:GetObject", "*")])},
		{"document": admin_doc},
	]}}
	docs := iam.documents(r)
	count(docs) == 2
	{"document": admin_doc, "where": "inline policy #1 of role arn:aws:iam::111111111111:role/ops", "inline_policy": "#1"} in docs
	iam.resource_sources[1] == {"document": admin_doc, "inline_policy": "#1"} with input as {"resource": r}
	m := {"type": "aws.iam.policy", "uid": "arn:aws:iam::111111111111:policy/Admin", "attributes": {"attachment_count": 3, "document": admin_doc}}
	[src] := [s | some s in iam.documents(m)]
	src.where == "policy arn:aws:iam::111111111111:policy/Admin (attached 3 times)"
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

# fast paths ------------------------------------------------------------------------------

test_pattern_glob_syntax_is_literal if {
	iam.pattern_matches("iam:[a]*", "iam:[a]x")
	not iam.pattern_matches("iam:[a]*", "iam:ax")
	iam.pattern_matches("iam:{x,y}*", "iam:{x,y}z")
	not iam.pattern_matches("iam:{x,y}*", "iam:xz")
	iam.pattern_matches(`iam:a\*`, `iam:a\b`)
	iam.pattern_matches("iam:*ro?e", "iam:PassRole")
	iam.pattern_matches("*:get*", "s3:GetObject")
}

test_pattern_wildcards_do_not_match_a_newline if {
	not iam.pattern_matches("*", "iam:a\nb")
	not iam.pattern_matches("iam:*", "iam:a\nb")
	not iam.pattern_matches("i*:*b", "iam:a\nb")
	iam.pattern_matches("iam:a\nb", "iam:a\nb")
	iam.pattern_matches("iam:a\n*", "iam:a\nb")
}

test_pattern_kind if {
	iam.pattern_kind("*") == ["any", "", "*"]
	iam.pattern_kind("**") == ["any", "", "**"]
	iam.pattern_kind("*:get*") == ["wild", "", "*:get*"]
	iam.pattern_kind("i?m:get*") == ["wild", "", "i?m:get*"]
	iam.pattern_kind("iam:passrole") == ["literal", "iam", "iam:passrole"]
	iam.pattern_kind("iam:*") == ["prefix", "iam", "iam:"]
	iam.pattern_kind("iam:get*") == ["prefix", "iam", "iam:get"]
	iam.pattern_kind("iam:*role") == ["pattern", "iam", "iam:*role"]
	iam.pattern_kind("iam:get?") == ["pattern", "iam", "iam:get?"]
}

test_facts_allowed_by_service if {
	fs := iam.document_facts(doc([
		allow(["iam:*", "s3:Get*", "ec2:RunInstances"], "*"),
		deny("iam:Put*", "*"),
		allow("lambda:*", "arn:aws:lambda:*:*:function:x"),
	]))
	by_service := {
		"iam": ["iam:#", "iam:passrole", "iam:putrolepolicy"],
		"s3": ["s3:getobject", "s3:putobject"],
		"ec2": ["ec2:runinstances"],
		"lambda": ["lambda:createfunction"],
		"#": ["#:#"],
	}
	iam.facts_allowed(fs, by_service) == {"iam:#", "iam:passrole", "s3:getobject", "ec2:runinstances"}
	iam.facts_allowed_somewhere(fs, by_service) == {"iam:#", "iam:passrole", "s3:getobject", "ec2:runinstances", "lambda:createfunction"}
}

test_facts_allowed_not_action if {
	fs := iam.document_facts(doc([{"Effect": "Allow", "NotAction": ["iam:*", "s3:Get*"], "Resource": "*"}]))
	iam.facts_allowed(fs, {"iam": ["iam:#"], "s3": ["s3:getobject", "s3:putobject"], "#": ["#:#"]}) == {"s3:putobject", "#:#"}
}

# may_cover_all tells with its regex written out which Resource patterns may have a scope.
test_may_cover_all_is_broad_resource if {
	patterns := [
		"*", "**", "*/*", "*:*", "*:", "arn:*", "ARN:*", "arn:aws:*", "arn:aws:*:*:*:*", "arn:aws:iam::*:*",
		"arn:aws:iam::111111111111:*", "arn:aws:iam::*:role/*", "arn:aws:iam::*:ROLE/**", "arn:aws:iam:*",
		"arn:aws:iam::*", "arn:aws:s3:::*", "arn:aws:iam::*:*:", "arn:aws:s3:::bucket/*", "arn:aws:iam::*:role/app-*",
		"arn:aws:kms:eu-west-1:111111111111:key/x", "arn:aws:iam::*:role/?", "arn", "", "role/*", "x:*",
		"arn:aws:lambda:eu-west-1:111111111111:function:*", "arn:aws:lambda:*:*:function:prod-*",
		"arn:aws:ec2:*:*:instance/*", "arn:aws:ec2:*:*:Instance/i-1", "arn:aws:glue:*:*:devEndpoint/*",
	]
	every r in patterns {
		covers := {true | iam.may_cover_all({"Resource": r})}
		{true | regex.match(iam.broad_resource_ci, r)} == covers
		{true | iam.may_cover_all({"Resource": ["arn:aws:s3:::bucket/x", r]})} == covers
		{true | count(iam.resource_scopes(r)) > 0} == covers
	}
}

test_resource_scopes_only_for_broad_patterns if {
	every r in ["arn:aws:s3:::bucket/*", "arn:aws:iam::*:role/app-*", "x:*", "role/*", "arn:aws:kms:eu-west-1:1:key/x"] {
		not regex.match(iam.broad_resource_ci, r)
		iam.resource_scopes(r) == set()
	}
	every r in ["*", "arn:aws:iam::*:ROLE/**", "arn:aws:iam:*", "arn:aws:s3:::*", "ARN:AWS:*"] {
		regex.match(iam.broad_resource_ci, r)
		count(iam.resource_scopes(r)) > 0
	}
}

# per-resource rules ----------------------------------------------------------------------

managed(document) := {"type": "aws.iam.policy", "name": "P", "attributes": {"attachment_count": 1, "document": document}}

inline_role(documents) := {"type": "aws.iam.role", "name": "R", "attributes": {"inline_policies": [{"name": sprintf("p%d", [i]), "document": d} | some i, d in documents]}}

test_granting_documents if {
	iam.granting_documents == {0} with input as {"resource": managed(doc([allow("s3:GetObject", "arn:aws:s3:::b/*"), allow("iam:PassRole", ["x", "*"])]))}
	iam.granting_documents == {0} with input as {"resource": managed({"Statement": allow("s3:GetObject", "ARN:AWS:S3:::*")})}
	iam.granting_documents == {1} with input as {"resource": inline_role([
		doc([allow("*", "arn:aws:s3:::b/*")]),
		doc([{"Effect": "Allow", "Action": "s3:GetObject", "NotResource": "arn:aws:s3:::b/*"}]),
	])}
	iam.granting_documents == set() with input as {"resource": inline_role([
		doc([object.union(allow("*", "*"), {"Condition": {"Bool": {"aws:SecureTransport": "true"}}})]),
		doc([deny("*", "*")]),
		{"Statement": "not a statement"},
	])}
	iam.granting_documents == set() with input as {"resource": object.union(managed(doc([allow("*", "*")])), {"attributes": {"attachment_count": 0}})}
	iam.granting_documents == set() with input as {"resource": object.union(inline_role([doc([allow("*", "*")])]), {"type": "aws.iam.access_key"})}
}

test_resource_sources_are_documents if {
	resources := [
		object.union(managed(admin_doc), {"attributes": {"attached_to": {"roles": ["ops"]}}}),
		inline_role([admin_doc, doc([allow("s3:GetObject", "*")])]),
		{"type": "aws.iam.user", "name": "u", "attributes": {"inline_policies": [{"name": "x", "document": admin_doc}]}},
	]
	every r in resources {
		docs := {object.union(src, {"where": iam.where(src)}) | some src in iam.resource_sources} with input as {"resource": r}
		docs == iam.documents(r)
	}
}

test_everything_and_allowed_per_document if {
	r := inline_role([doc([allow("iam:*", "*")]), admin_doc, doc([allow("s3:*", "*")])])
	iam.granting_documents == {0, 1, 2} with input as {"resource": r}
	iam.everything_documents == {1} with input as {"resource": r}
	iam.document_allowed(0, {"iam": ["iam:#", "iam:passrole"], "s3": ["s3:#"]}) == {"iam:#", "iam:passrole"} with input as {"resource": r}
}

trust_role(statements) := {"type": "aws.iam.role", "name": "R", "account": "111111111111", "attributes": {"assume_role_policy": {"Statement": statements}}}

test_trust_prefilters if {
	not iam.may_trust_anyone with input as {"resource": trust_role([trust({"Service": "ec2.amazonaws.com"}), trust({"AWS": "arn:aws:iam::222222222222:root"})])}
	iam.may_trust_anyone with input as {"resource": trust_role([trust({"AWS": ["arn:aws:iam::222222222222:root", "*"]})])}
	iam.may_trust_anyone with input as {"resource": trust_role(trust({"Federated": "accounts.google.com"}))}
	iam.may_trust_anyone with input as {"resource": trust_role([{"Effect": "Allow", "NotPrincipal": {"AWS": "x"}, "Action": "sts:AssumeRole"}])}
	iam.foreign_trusts == set() with input as {"resource": trust_role([trust({"AWS": ["arn:aws:iam::111111111111:root", "111111111111"]})])}
	iam.foreign_trusts == {["222222222222", "arn:aws:iam::222222222222:role/x"], ["333333333333", "333333333333"]} with input as {"resource": trust_role(object.union(
		trust({"AWS": ["arn:aws:iam::222222222222:role/x", "333333333333", "arn:aws:iam::111111111111:root"]}),
		{"Condition": {"StringEquals": {"sts:ExternalId": "x"}}},
	))}
	iam.foreign_trusts == set() with input as {"resource": trust_role([{"Effect": "Allow", "Principal": {"AWS": "222222222222"}, "Action": "sts:TagSession"}])}
}

test_assumed_actions if {
	iam.assumed_actions({"Action": "STS:AssumeRole"}) == {"sts:AssumeRole"}
	iam.assumed_actions({"Action": "sts:AssumeRole*"}) == {"sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoleWithSAML"}
	iam.assumed_actions({"Action": "sts:AssumeRole", "NotAction": "sts:TagSession"}) == {"sts:AssumeRole", "sts:AssumeRoleWithWebIdentity", "sts:AssumeRoleWithSAML"}
	iam.assumed_actions({"Action": ["sts:TagSession", "sts:AssumeRoleWithSAML"]}) == {"sts:AssumeRoleWithSAML"}
	iam.assumed_actions({"Action": "sts:TagSession"}) == set()
}

test_allows_everything_service_with_a_newline if {
	not iam.allows_everything(doc([allow("*", "*"), allow("a\nb:Get", "arn:aws:s3:::b/x")]))
	iam.allows_everything(doc([allow("*", "*"), allow("ab:Get", "arn:aws:s3:::b/x")]))
}

test_allows_everything_not_action_without_service if {
	iam.allows_everything(doc([{"Effect": "Allow", "NotAction": "foo", "Resource": "*"}]))
	iam.allows_everything(doc([{"Effect": "Allow", "NotAction": "foo:bar", "Resource": "*"}]))
	not iam.allows_everything(doc([{"Effect": "Allow", "NotAction": "foo:*", "Resource": "*"}]))
	iam.allows_everything(doc([{"Effect": "Allow", "NotAction": "foo:*", "Resource": "*"}, allow("foo:*", "*")]))
}

test_known_account if {
	r := {"resource": {"account": "111111111111"}, "snapshot": {"accounts": ["222222222222"]}}
	iam.known_account("111111111111") with input as r
	iam.known_account("222222222222") with input as r
	not iam.known_account("333333333333") with input as r
	iam.known_account("333333333333") with input as r with data.warden.config as {"known_accounts": [333333333333]}
}

test_unknown_trusts if {
	doc := {"Statement": [{"Effect": "Allow", "Principal": {"AWS": ["arn:aws:iam::111111111111:root", "222222222222", "arn:aws:iam::444444444444:role/x"]}, "Action": "sts:AssumeRole"}]}
	r := {"resource": {"account": "111111111111", "attributes": {"assume_role_policy": doc}}}
	iam.unknown_trusts == {["222222222222", "222222222222"], ["444444444444", "arn:aws:iam::444444444444:role/x"]} with input as r
	iam.unknown_trusts == {["444444444444", "arn:aws:iam::444444444444:role/x"]} with input as object.union(r, {"snapshot": {"accounts": ["222222222222"]}})
}

# A Deny that leaves some resources (NotResource, or "*/*": only the ARNs holding a "/")
# takes "every resource" away, not "somewhere".
test_deny_leaving_resources_keeps_somewhere if {
	not_resource := {"Statement": [
		{"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
		{"Effect": "Deny", "Action": "s3:*", "NotResource": "arn:aws:s3:::data"},
	]}
	iam.allows_action(not_resource, "s3:ListBucket")
	not iam.allows_action_on_all_resources(not_resource, "s3:ListBucket")
	slashes := {"Statement": [
		{"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
		{"Effect": "Deny", "Action": "s3:*", "Resource": "*/*"},
	]}
	iam.allows_action(slashes, "s3:ListBucket")
	not iam.allows_action_on_all_resources(slashes, "s3:ListBucket")
}

# A Deny on "*" or on every ARN of the service takes the action away everywhere.
test_deny_everywhere if {
	not iam.allows_action(
		{"Statement": [
			{"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
			{"Effect": "Deny", "Action": "s3:*", "Resource": "**"},
		]},
		"s3:ListBucket",
	)
	not iam.allows_action(
		{"Statement": [
			{"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
			{"Effect": "Deny", "Action": "s3:*", "Resource": "arn:aws:s3:::*"},
		]},
		"s3:ListBucket",
	)
}
