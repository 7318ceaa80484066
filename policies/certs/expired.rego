# METADATA
# title: Certificate has expired
# description: Clients refuse an expired certificate, or learn to click through warnings; either way the service is down or its users are trained to accept interception.
# custom:
#   id: WARDEN-CERT-001
#   severity: critical
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-17"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   prowler: [acm_certificates_expiration_check]
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.expired

import data.warden.lib.certs
import data.warden.lib.time as wtime

# certs.resource_expired is computed once per resource and shared with the other policies.
deny contains violation if {
	certs.resource_expired
	not_after := certs.resource_certificate.not_after
	violation := {"msg": sprintf(
		"%s expired on %s (%d days ago)",
		[certs.resource_cert_label, certs.day(not_after), wtime.days_since(not_after)],
	)}
}
