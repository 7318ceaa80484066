package warden.aws.iam.user_direct_policies_test

import data.warden.aws.iam.user_direct_policies

user(attached, inline) := {
	"uid": "arn:aws:iam::111111111111:user/jenkins-legacy",
	"type": "aws.iam.user",
	"name": "jenkins-legacy",
	"account": "111111111111",
	"attributes": {"groups": ["release-engineers"], "attached_policies": attached, "inline_policies": inline},
}

test_attached_and_inline_violate_once if {
	r := user(
		[{"arn": "arn:aws:iam::aws:policy/AmazonS3FullAccess", "name": "AmazonS3FullAccess"}],
		[{"name": "jenkins-everything", "document": {"Statement": []}}],
	)
	[v] := [v | some v in user_direct_policies.deny] with input as {"resource": r}
	v.msg == "user jenkins-legacy has policies attached directly instead of through groups: AmazonS3FullAccess, jenkins-everything (inline)"
	v.attached_policies == ["AmazonS3FullAccess"]
	v.inline_policies == ["jenkins-everything"]
}

test_inline_only_violates if {
	count(user_direct_policies.deny) == 1 with input as {"resource": user([], [{"name": "self-service", "document": {}}])}
}

test_groups_only_passes if {
	count(user_direct_policies.deny) == 0 with input as {"resource": user([], [])}
}

test_missing_fields_pass if {
	r := {"uid": "arn:aws:iam::111111111111:user/x", "type": "aws.iam.user", "name": "x", "attributes": {}}
	count(user_direct_policies.deny) == 0 with input as {"resource": r}
}

test_groups_with_policies_pass if {
	r := object.union(user([{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "name": "ReadOnlyAccess"}], []), {
		"uid": "arn:aws:iam::111111111111:group/developers",
		"type": "aws.iam.group",
	})
	count(user_direct_policies.deny) == 0 with input as {"resource": r}
}

# --- messages never decide a violation -------------------------------------------

test_user_and_policies_without_names_still_violate if {
	r := object.remove(user([{"arn": "arn:aws:iam::aws:policy/AmazonS3FullAccess"}], []), ["name"])
	[v] := [v | some v in user_direct_policies.deny] with input as {"resource": r}
	v.msg == "user arn:aws:iam::111111111111:user/jenkins-legacy has policies attached directly instead of through groups: arn:aws:iam::aws:policy/AmazonS3FullAccess"

	# an inline policy without a name still counts, named by its position
	[w] := [w | some w in user_direct_policies.deny] with input as {"resource": user([{}], [{"document": {}}])}
	w.attached_policies == ["#0"]
	w.inline_policies == ["#0"]
}
