# METADATA
# title: Certificate key is weak
# description: RSA keys under 2048 bits, EC keys under 256 bits and DSA keys can be broken or are no longer accepted by browsers; reissue with a strong key.
# custom:
#   id: WARDEN-CERT-003
#   severity: high
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-13"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   prowler: [acm_certificates_with_secure_key_algorithms]
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.weak_key

import data.warden.lib.certs

# Settings are rules without arguments: computed once per evaluation.
min_rsa_bits := n if {
	n := data.warden.config.min_rsa_bits
} else := 2048

min_ec_bits := n if {
	n := data.warden.config.min_ec_bits
} else := 256

# A key can only be weak if its size is below one of the minimums (under Rego's ordering of
# values, which also orders values that are not numbers) or if it is DSA: cheap tests, on
# the input, that spare the call of certs.weak_key for the usual strong key.
size_limit := max([min_rsa_bits, min_ec_bits])

deny contains violation(cert, weakness) if {
	input.resource.attributes.certificate.key_size < size_limit
	cert := certs.resource_certificate
	weakness := certs.weak_key(cert, min_rsa_bits, min_ec_bits)
}

deny contains violation(cert, weakness) if {
	upper(input.resource.attributes.certificate.key_algorithm) == "DSA"
	cert := certs.resource_certificate
	weakness := certs.weak_key(cert, min_rsa_bits, min_ec_bits)
}

violation(cert, weakness) := {
	"msg": sprintf("%s has a weak %s", [certs.resource_cert_label, weakness]),
	"key_algorithm": cert.key_algorithm,
	"key_size": object.get(cert, "key_size", null),
}
