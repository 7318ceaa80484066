# METADATA
# title: Workload identity provider trusts a multi-tenant issuer without an attribute condition
# description: GitHub Actions, GitLab.com, Google, HCP Terraform and Buildkite sign tokens for every one of their users, with any audience the requester asks for; a provider trusting one without an attribute condition lets anyone with an account there (an attacker's own repository) exchange a token for the pool's federated identity and use every role bound to the pool's principal sets. The pool's bindings decide how far that reaches, so they are the first thing to check. No fix is automated because the condition must name the repositories, projects or organisations meant to get in, which only their owner knows, and a wrong one locks out their pipelines.
# custom:
#   id: WARDEN-GCP-IAM-019
#   severity: high
#   resource_types: [gcp.iam.workload_identity_provider]
#   frameworks: {nist-800-53-r5: ["AC-3", "IA-8"], soc2: ["CC6.1"], iso-27001-2022: ["A.5.15", "A.8.5"]}
#   prowler: [iam_workload_identity_pool_provider_attribute_condition]
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.workload_identity_multi_tenant_issuer

import data.warden.lib.display
import data.warden.lib.gcp

platforms := {
	"token.actions.githubusercontent.com": "any GitHub Actions workflow of any repository",
	"gitlab.com": "any GitLab.com pipeline of any project",
	"accounts.google.com": "any Google account",
	"app.terraform.io": "any HCP Terraform run of any organization",
	"agent.buildkite.com": "any Buildkite pipeline of any organization",
}

deny contains violation if {
	gcp.workload_provider_unconditioned
	issuer := input.resource.attributes.issuer_uri
	is_string(issuer)
	gcp.multi_tenant_issuer(issuer)
	gcp.workload_provider_active
	[host, _] := gcp.issuer_parts(issuer)
	violation := {
		"msg": sprintf(
			"workload identity provider %s of pool %s trusts %s without an attribute condition: %s can sign in as the pool's federated identities",
			[display.name, display.attribute("pool", "unknown"), issuer, object.get(platforms, host, "anyone with an account there")],
		),
		"issuer_uri": issuer,
	}
}
