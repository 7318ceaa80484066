# METADATA
# title: IAM user without a team tag
# description: >-
#   Every IAM user, person or machine, names the team that answers for it in a "team"
#   tag, so that a finding on it reaches someone. No fix is automated: tag the user.
# custom:
#   id: ACME-AWS-IAM-001
#   severity: low
#   resource_types: [aws.iam.user]
#   frameworks: {}
#   remediation: {action: notify, risk: none}
package acme.aws.iam.user_team_tag

import data.warden.lib.display

deny contains violation if {
	not has_team
	violation := {"msg": sprintf("IAM user %s has no team tag", [display.name])}
}

has_team if trim_space(object.get(object.get(input.resource, "tags", {}), "team", "")) != ""
