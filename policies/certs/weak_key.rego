# METADATA
# title: Certificate key is weak
# description: RSA keys under 2048 bits, EC keys under 256 bits and DSA keys can be broken or are no longer accepted by browsers; reissue with a strong key.
# custom:
#   id: WARDEN-CERT-003
#   severity: high
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-12", "SC-13"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.weak_key

import data.warden.lib.certs
import data.warden.lib.config

min_rsa_bits := config.setting("min_rsa_bits", 2048)

min_ec_bits := config.setting("min_ec_bits", 256)

deny contains violation if {
	cert := certs.certificate(input.resource)
	weakness := certs.weak_key(cert, min_rsa_bits, min_ec_bits)
	violation := {
		"msg": sprintf("%s has a weak %s", [certs.cert_label(input.resource), weakness]),
		"key_algorithm": cert.key_algorithm,
		"key_size": object.get(cert, "key_size", null),
	}
}
