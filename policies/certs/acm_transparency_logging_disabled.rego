# METADATA
# title: ACM certificate opts out of Certificate Transparency logging
# description: Chrome and Safari refuse a publicly trusted certificate that is not in Certificate Transparency logs, so an ACM-issued certificate that opted out breaks HTTPS for their users once it is served, and the owner loses the public record that shows which certificates exist for its names. Imported certificates are logged (or not) by their own CA and private ones never are, so only AMAZON_ISSUED certificates are judged. No fix is automated because logging publishes every name on the certificate, internal host names included, for good; opting out is sometimes deliberate, and a person decides.
# custom:
#   id: WARDEN-CERT-010
#   severity: medium
#   resource_types: [aws.acm.certificate]
#   frameworks: {nist-800-53-r5: ["SC-17"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   prowler: [acm_certificates_transparency_logs_enabled]
#   remediation: {action: notify, risk: none}
package warden.certs.acm_transparency_logging_disabled

import data.warden.lib.certs

# Expired, revoked and failed certificates are never served again; CERT-001 reports the
# expired ones.
live_statuses := {"ISSUED", "PENDING_VALIDATION", "INACTIVE"}

# transparency_logging == "DISABLED" lets OPA's rule index skip the rest.
deny contains violation if {
	input.resource.attributes.transparency_logging == "DISABLED"
	input.resource.attributes.cert_type == "AMAZON_ISSUED"
	input.resource.attributes.status in live_statuses
	violation := {"msg": sprintf(
		"%s opts out of Certificate Transparency logging%s: Chrome and Safari refuse it",
		[certs.resource_label, in_use],
	)}
}

in_use := sprintf(" and is in use by %d resources", [count(input.resource.attributes.in_use_by)]) if {
	is_array(input.resource.attributes.in_use_by)
	count(input.resource.attributes.in_use_by) > 1
} else := " and is in use by 1 resource" if {
	is_array(input.resource.attributes.in_use_by)
	count(input.resource.attributes.in_use_by) == 1
} else := ""
