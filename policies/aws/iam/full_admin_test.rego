package warden.aws.iam.full_admin_test

import data.warden.aws.iam.full_admin

admin := {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}

managed(document, count) := {
	"uid": "arn:aws:iam::aws:policy/AdministratorAccess",
	"type": "aws.iam.policy",
	"name": "AdministratorAccess",
	"account": "111111111111",
	"attributes": {
		"aws_managed": true,
		"attachment_count": count,
		"document": document,
		"attached_to": {"users": [], "groups": [], "roles": ["break-glass-admin"]},
	},
}

role(inline) := {
	"uid": "arn:aws:iam::111111111111:role/ops",
	"type": "aws.iam.role",
	"name": "ops",
	"account": "111111111111",
	"attributes": {"attached_policies": [], "inline_policies": inline},
}

test_attached_managed_policy_violates if {
	[v] := [v | some v in full_admin.deny] with input as {"resource": managed(admin, 1)}
	v.msg == "policy AdministratorAccess (attached to role break-glass-admin) allows every action on every resource"
	not v.key
	not v.action
}

test_unattached_managed_policy_passes if {
	count(full_admin.deny) == 0 with input as {"resource": managed(admin, 0)}
}

test_inline_policy_violates_with_delete_action if {
	r := role([
		{"name": "everything", "document": {"Statement": {"Effect": "Allow", "Action": ["*"], "Resource": "*"}}},
		{"name": "logs", "document": {"Statement": [{"Effect": "Allow", "Action": "logs:*", "Resource": "*"}]}},
	])
	[v] := [v | some v in full_admin.deny] with input as {"resource": r}
	v.key == "everything"
	not v.action # detach_policy deletes one inline policy, given its name
	v.inline_policy == "everything"
	v.msg == "inline policy everything of role ops allows every action on every resource"
}

test_conditional_allow_passes if {
	doc := {"Statement": [{
		"Effect": "Allow", "Action": "*", "Resource": "*",
		"Condition": {"Bool": {"aws:MultiFactorAuthPresent": "true"}},
	}]}
	count(full_admin.deny) == 0 with input as {"resource": managed(doc, 2)}
}

test_deny_everything_overrides if {
	doc := {"Statement": [
		{"Effect": "Allow", "Action": "*", "Resource": "*"},
		{"Effect": "Deny", "NotAction": ["s3:Get*", "s3:List*"], "Resource": "*"},
	]}
	count(full_admin.deny) == 0 with input as {"resource": managed(doc, 1)}
}

test_scoped_resource_passes if {
	doc := {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": ["arn:aws:s3:::acme-sandbox", "arn:aws:s3:::acme-sandbox/*"]}]}
	count(full_admin.deny) == 0 with input as {"resource": managed(doc, 1)}
}

test_power_user_not_action_passes if {
	doc := {"Statement": [{"Effect": "Allow", "NotAction": ["iam:*", "organizations:*", "account:*"], "Resource": "*"}]}
	count(full_admin.deny) == 0 with input as {"resource": managed(doc, 1)}
}

# --- messages never decide a violation -------------------------------------------

test_policy_without_name_still_violates if {
	[v] := [v | some v in full_admin.deny] with input as {"resource": object.remove(managed(admin, 1), ["name"])}
	v.msg == "policy arn:aws:iam::aws:policy/AdministratorAccess (attached to role break-glass-admin) allows every action on every resource"
}

test_inline_policy_without_name_is_read_and_keyed_by_position if {
	r := object.remove(role([{"name": "logs", "document": {"Statement": []}}, {"document": admin}]), ["name"])
	[v] := [v | some v in full_admin.deny] with input as {"resource": r}
	v.key == "#1"
	v.msg == "inline policy #1 of role arn:aws:iam::111111111111:role/ops allows every action on every resource"
}
