# METADATA
# title: Organisation does not log data access for all services
# description: Admin Activity logs are always written, but reads of configuration and reads and writes of data (ADMIN_READ, DATA_READ, DATA_WRITE) are logged only where an audit config enables them; without a default for allServices on the organisation, an intruder copying buckets or tables from any project leaves no trace unless that project or its folder enables the logs itself. Projects and folders inherit the organisation's audit config, so it is judged there; a project outside any organisation is not judged, as its IAM policy does not say whether it has one. No fix is automated because Data Access logs can multiply logging volume and cost (BigQuery and Cloud Storage reads above all), a choice the organisation makes.
# custom:
#   id: WARDEN-GCP-IAM-017
#   severity: medium
#   resource_types: [gcp.organization.iam_policy]
#   frameworks: {cis-gcp-2.0: ["2.1"], nist-800-53-r5: ["AU-2", "AU-12"], pci-dss-4.0: ["10.2.1", "10.2.1.1"], soc2: ["CC7.2"], iso-27001-2022: ["A.8.15"]}
#   prowler: [iam_audit_logs_enabled]
#   remediation: {action: notify, risk: none}
package warden.gcp.iam.audit_logs_not_configured

import data.warden.lib.gcp

# Only when audit_configs were read: an older snapshot, or a failed read, decides nothing.
missing := gcp.audit_log_types - gcp.logged_types(gcp.resource_audit_configs)

deny contains violation if {
	count(missing) > 0
	violation := {
		"msg": sprintf(
			"%s does not log %s for allServices: data read or written in %s leaves no audit trail unless a folder or project below enables it",
			[gcp.policy_holder, concat(", ", sort(missing)), gcp.policy_reach],
		),
		"missing": sort(missing),
	}
}
