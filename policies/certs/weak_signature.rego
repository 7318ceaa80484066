# METADATA
# title: Certificate is signed with SHA-1 or MD5
# description: Collisions in SHA-1 and MD5 let an attacker forge a certificate with the same signature; browsers reject them.
# custom:
#   id: WARDEN-CERT-004
#   severity: high
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate, tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-13"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.weak_signature

import data.warden.lib.certs

# certs.weak_signature(cert), without passing the certificate to a function.
deny contains violation if {
	cert := certs.resource_certificate
	weak_hashes := certs.weak_hashes
	some part in split(upper(cert.signature_algorithm), "-")
	part in weak_hashes
	violation := {
		"msg": sprintf("%s is signed with %s", [certs.resource_cert_label, cert.signature_algorithm]),
		"signature_algorithm": cert.signature_algorithm,
	}
}
