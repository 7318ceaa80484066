# METADATA
# title: Certificate expires within 30 days
# description: A certificate this close to expiry needs renewing now; managed renewal normally happens well before, so one this late is stuck.
# custom:
#   id: WARDEN-CERT-002
#   severity: high
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-17"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   prowler: [acm_certificates_expiration_check]
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.expiring

import data.warden.lib.certs
import data.warden.lib.time as wtime

# Settings and cutoffs are rules without arguments: computed once per evaluation.
warning_days := n if {
	n := data.warden.config.cert_expiry_warning_days
} else := 30

# wtime.days_until(ts) < warning_days ⟺ time.parse_rfc3339_ns(ts) < cutoff. time.add_date
# computes it for a whole number of days without big-number arithmetic (as
# wtime.within_bound does, without the cost of a function call); any other threshold goes
# to wtime.within_bound.
cutoff := t if {
	t := time.add_date(time.now_ns(), 0, 0, warning_days)
} else := wtime.within_bound(warning_days)

# certs.expires_within(cert, warning_days), from the shared parsed not_after.
deny contains violation if {
	certs.resource_not_after_ns < cutoff
	not certs.resource_expired
	not_after := certs.resource_certificate.not_after
	violation := {"msg": sprintf(
		"%s expires on %s (in %d days)",
		[certs.resource_cert_label, certs.day(not_after), wtime.days_until(not_after)],
	)}
}
