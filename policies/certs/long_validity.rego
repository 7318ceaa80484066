# METADATA
# title: Certificate is valid for more than 398 days
# description: Since September 2020 browsers refuse publicly trusted TLS certificates valid for more than 398 days, and a certificate that long-lived (imported, self-managed or from a private CA) keeps one key in service for years; a copy of the key leaked from a server or backup impersonates the site until expiry, since revocation is rarely checked. Renewing issues a short-lived certificate with a new key. CA certificates are not judged.
# custom:
#   id: WARDEN-CERT-011
#   severity: low
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-17"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.long_validity

import data.warden.lib.certs
import data.warden.lib.time as wtime

max_days := n if {
	n := data.warden.config.cert_max_validity_days
} else := 398

cert := certs.resource_certificate

not_before_ns := time.parse_rfc3339_ns(cert.not_before)

# The latest end of validity within the limit: not_before plus max_days, by time.add_date
# for a whole number of days.
limit_ns := t if {
	t := time.add_date(not_before_ns, 0, 0, max_days)
} else := not_before_ns + (wtime.round_down(max_days) * wtime.ns_per_day)

leaf if not object.get(cert, "is_ca", false) == true

deny contains violation if {
	leaf
	certs.resource_not_after_ns > limit_ns
	violation := {
		"msg": sprintf(
			"%s is valid for %d days (%s to %s), more than %d",
			[certs.resource_cert_label, wtime.floor_days(certs.resource_not_after_ns - not_before_ns), certs.day(cert.not_before), certs.day(cert.not_after), max_days],
		),
		"validity_days": wtime.floor_days(certs.resource_not_after_ns - not_before_ns),
	}
}

# A certificate that never expires (not_after in 9999) has no parsed end: it is the
# longest-lived of all.
deny contains violation if {
	leaf
	is_string(cert.not_after)
	wtime.far_future(cert.not_after)
	_ := not_before_ns
	violation := {
		"msg": sprintf("%s never expires (valid from %s to %s)", [certs.resource_cert_label, certs.day(cert.not_before), certs.day(cert.not_after)]),
		"validity_days": null,
	}
}
