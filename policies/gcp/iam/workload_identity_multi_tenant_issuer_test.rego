package warden.gcp.iam.workload_identity_multi_tenant_issuer_test

import data.warden.gcp.iam.workload_identity_multi_tenant_issuer as policy

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

test_github_without_condition if {
	policy.deny == {{
		"msg": "workload identity provider github of pool ci trusts https://token.actions.githubusercontent.com without an attribute condition: any GitHub Actions workflow of any repository can sign in as the pool's federated identities",
		"issuer_uri": "https://token.actions.githubusercontent.com",
	}} with input as provider("github", github)
}

test_other_multi_tenant_issuers if {
	count(policy.deny) == 1 with input as provider("gitlab", {"protocol": "oidc", "issuer_uri": "https://gitlab.com/"})
	count(policy.deny) == 1 with input as provider("tfc", {"protocol": "oidc", "issuer_uri": "https://app.terraform.io", "attribute_condition": "   "})
	count(policy.deny) == 1 with input as provider("google", {"issuer_uri": "https://accounts.google.com"})
}

test_allowed_audiences_do_not_help if {
	# the workflow chooses its token's audience
	count(policy.deny) == 1 with input as provider("github", object.union(github, {"allowed_audiences": ["https://iam.googleapis.com/projects/480012345678/locations/global/workloadIdentityPools/ci/providers/github"]}))
}

test_near_miss_condition_set if {
	count(policy.deny) == 0 with input as provider("github", object.union(github, {"attribute_condition": "assertion.repository_owner == 'acme'"}))
}

test_near_miss_single_tenant_issuers if {
	count(policy.deny) == 0 with input as provider("ghe", {"protocol": "oidc", "issuer_uri": "https://token.actions.githubusercontent.com/acme-enterprise"})
	count(policy.deny) == 0 with input as provider("gitlab-self", {"protocol": "oidc", "issuer_uri": "https://gitlab.acme.example"})
	count(policy.deny) == 0 with input as provider("circleci", {"protocol": "oidc", "issuer_uri": "https://oidc.circleci.com/org/8f1c2a3b-4d5e-6f70-8192-a3b4c5d6e7f8"})
	count(policy.deny) == 0 with input as provider("aws", aws)
}

test_near_miss_inactive_provider_or_pool if {
	count(policy.deny) == 0 with input as provider("github", object.union(github, {"disabled": true}))
	count(policy.deny) == 0 with input as provider("github", object.union(github, {"pool_disabled": true}))
	count(policy.deny) == 0 with input as provider("github", object.union(github, {"state": "DELETED"}))
}

test_absent_flags_read_as_active if {
	bare := json.remove(provider("github", github), ["resource/attributes/disabled", "resource/attributes/pool_disabled", "resource/attributes/state"])
	count(policy.deny) == 1 with input as bare
}

# --- messages never decide a violation -------------------------------------------

test_provider_without_name_or_pool_still_violates if {
	given := provider("github", github)
	{v.msg | some v in policy.deny with input as json.remove(given, ["resource/name", "resource/attributes/pool"])} == {sprintf("workload identity provider %s of pool unknown trusts https://token.actions.githubusercontent.com without an attribute condition: any GitHub Actions workflow of any repository can sign in as the pool's federated identities", [given.resource.uid])}
}
