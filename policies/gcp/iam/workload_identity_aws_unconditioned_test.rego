package warden.gcp.iam.workload_identity_aws_unconditioned_test

import data.warden.gcp.iam.workload_identity_aws_unconditioned as policy

provider(id, overrides) := {"resource": {
	"uid": sprintf("//iam.googleapis.com/projects/480012345678/locations/global/workloadIdentityPools/ci/providers/%s", [id]),
	"type": "gcp.iam.workload_identity_provider",
	"name": id,
	"account": "acme-prod-4821",
	"region": "global",
	"scope": "gcp/acme-prod-4821/iam",
	"tags": {},
	"attributes": object.union(
		{
			"pool": "ci",
			"pool_disabled": false,
			"disabled": false,
			"state": "ACTIVE",
			"attribute_condition": "",
		},
		overrides,
	),
}}

github := {
	"protocol": "oidc",
	"issuer_uri": "https://token.actions.githubusercontent.com",
	"attribute_mapping": {"google.subject": "assertion.sub", "attribute.repository": "assertion.repository"},
}

aws := {
	"protocol": "aws",
	"aws_account_id": "111111111111",
	"attribute_mapping": {"google.subject": "assertion.arn", "attribute.aws_role": "assertion.arn.extract('assumed-role/{role}/')"},
}

test_aws_provider_without_condition if {
	policy.deny == {{"msg": "AWS workload identity provider aws-prod of pool ci has no attribute condition: any user or role of AWS account 111111111111 can sign in as the pool's federated identities"}} with input as provider("aws-prod", aws)
}

test_aws_provider_known_by_its_account if {
	count(policy.deny) == 1 with input as provider("aws-prod", {"aws_account_id": "111111111111"})
}

test_near_miss_condition_names_roles if {
	count(policy.deny) == 0 with input as provider("aws-prod", object.union(aws, {"attribute_condition": "attribute.aws_role == 'gcp-exporter'"}))
}

test_near_miss_other_protocols_and_inactive if {
	count(policy.deny) == 0 with input as provider("github", github)
	count(policy.deny) == 0 with input as provider("okta", {"protocol": "saml"})
	count(policy.deny) == 0 with input as provider("aws-prod", object.union(aws, {"disabled": true}))
	count(policy.deny) == 0 with input as provider("aws-prod", object.union(aws, {"pool_disabled": true}))
}

# --- messages never decide a violation -------------------------------------------

test_provider_without_account_still_violates if {
	given := json.remove(provider("aws-prod", aws), ["resource/name", "resource/attributes/aws_account_id"])
	{v.msg | some v in policy.deny with input as given} == {"AWS workload identity provider //iam.googleapis.com/projects/480012345678/locations/global/workloadIdentityPools/ci/providers/aws-prod of pool ci has no attribute condition: any user or role of AWS account (unknown) can sign in as the pool's federated identities"}
}
