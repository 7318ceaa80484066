# METADATA
# title: Allow statement uses NotAction or NotResource broadly
# description: An Allow with NotAction on every resource, or with NotResource, grants everything it does not name, including actions and resources that AWS adds later. No fix is automated, since what the statement should name instead is for the policy's owner to decide.
# custom:
#   id: WARDEN-AWS-IAM-004
#   severity: high
#   resource_types: [aws.iam.policy, aws.iam.user, aws.iam.group, aws.iam.role]
#   frameworks: {nist-800-53-r5: ["AC-6"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.15"]}
#   remediation: {action: notify, risk: none}
package warden.aws.iam.negated_grant

import data.warden.lib.iam

deny contains violation if {
	some d in iam.granting_documents
	some f in iam.negated_grants[d]
	not d in iam.everything_documents # WARDEN-AWS-IAM-001 reports it
	s := f.statement
	negations := [sprintf("%s %v", [field, iam.as_list(s[field])]) | some field in ["NotAction", "NotResource"]; s[field]]
	statement := statement_id(s, f.index)
	src := iam.resource_sources[d]
	violation := object.union_n([
		{
			"msg": sprintf(
				"%s: Allow statement %s uses %s on a broad resource, so it grants everything it does not name",
				[iam.where(src), statement, concat(" and ", negations)],
			),
			"statement": statement,
		},
		iam.violation_fields(src, statement),
	])
}

# statement_id(s, i) names a statement by its Sid, or by its position when it has none.
statement_id(s, i) := s.Sid if {
	is_string(s.Sid)
	s.Sid != ""
} else := sprintf("#%d", [i])
