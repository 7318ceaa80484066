package acme.aws.iam.user_team_tag_test

import data.acme.aws.iam.user_team_tag

user(tags) := {"resource": {
	"uid": "arn:aws:iam::111111111111:user/ci-deploy-prod",
	"type": "aws.iam.user",
	"name": "ci-deploy-prod",
	"account": "111111111111",
	"region": "global",
	"tags": tags,
	"attributes": {},
}}

test_owner_tag_alone_is_not_a_team if {
	user_team_tag.deny == {{"msg": "IAM user ci-deploy-prod has no team tag"}} with input as user({"owner": "platform"})
}

test_blank_team_is_no_team if {
	count(user_team_tag.deny) == 1 with input as user({"team": "  "})
}

test_team_tag_is_a_near_miss if {
	count(user_team_tag.deny) == 0 with input as user({"team": "platform"})
}

test_no_tags_and_no_name if {
	count(user_team_tag.deny) == 1 with input as {"resource": {
		"uid": "arn:aws:iam::111111111111:user/x",
		"type": "aws.iam.user",
		"attributes": {},
	}}
}
