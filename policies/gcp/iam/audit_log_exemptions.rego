# METADATA
# title: Members are exempted from audit logging
# description: An exempted member's data reads and writes are not logged for that service and log type, at this level and every project beneath; a stolen credential of an exempted account (usually a busy service account, exempted to cut log volume) reads data without a trace. CIS asks for no exemptions. No fix is automated because removing an exemption raises logging volume and cost, a trade-off the owner of the logs decides.
# custom:
#   id: WARDEN-GCP-IAM-018
#   severity: medium
#   resource_types: [gcp.project.iam_policy, gcp.folder.iam_policy, gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["2.1"], nist-800-53-r5: ["AU-2", "AU-12"], pci-dss-4.0: ["10.2.1"], soc2: ["CC7.2"], iso-27001-2022: ["A.8.15"]}
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.audit_log_exemptions

import data.warden.lib.gcp

deny contains violation if {
	some e in gcp.audit_exemptions(gcp.resource_audit_configs)
	violation := {
		"msg": sprintf(
			"%s exempts %s from %s audit logs of %s",
			[gcp.policy_holder, e.member, e.log_type, e.service],
		),
		"key": concat("/", [e.service, e.log_type, e.member]),
		"service": e.service,
		"log_type": e.log_type,
		"member": e.member,
	}
}
