# METADATA
# title: Certificate expires within 30 days
# description: A certificate this close to expiry needs renewing now; managed renewal normally happens well before, so one this late is stuck.
# custom:
#   id: WARDEN-CERT-002
#   severity: high
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-17"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.expiring

import data.warden.lib.certs
import data.warden.lib.config
import data.warden.lib.time as wtime

warning_days := config.setting("cert_expiry_warning_days", 30)

deny contains violation if {
	cert := certs.certificate(input.resource)
	certs.expires_within(cert, warning_days)
	violation := {"msg": sprintf(
		"%s expires on %s (in %d days)",
		[certs.cert_label(input.resource), certs.day(cert.not_after), wtime.days_until(cert.not_after)],
	)}
}
