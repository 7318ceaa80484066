# METADATA
# title: Certificate helpers
# description: Shared reasoning about X.509 certificates (the resource model's certificate shape) and TLS endpoints.
package warden.lib.certs

import data.warden.lib.display
import data.warden.lib.time as wtime

# certificate(resource) is the certificate a resource presents (attributes.certificate).
# It is undefined when there is nothing to judge: no certificate, or a tls.endpoint that
# was not reached (its certificate, trust and host-name results are unknown, not bad).
certificate(resource) := cert if {
	resource.type != "tls.endpoint"
	cert := resource.attributes.certificate
	is_object(cert)
}

certificate(resource) := cert if {
	probed(resource)
	cert := resource.attributes.certificate
	is_object(cert)
}

# probed(resource) holds for a tls.endpoint that was reached and answered the handshake.
probed(resource) if {
	resource.type == "tls.endpoint"
	resource.attributes.reachable == true
}

# expired(cert) holds once cert's not_after has passed. It compares instants rather than
# wtime.days_until, whose whole days read 0 for the first day after expiry.
expired(cert) if {
	is_string(cert.not_after)
	not wtime.far_future(cert.not_after)
	time.parse_rfc3339_ns(cert.not_after) < time.now_ns()
}

# expires_within(cert, days) holds when cert is still valid but has fewer than days days left.
expires_within(cert, days) if {
	not expired(cert)
	wtime.days_until(cert.not_after) < days
}

# weak_key(cert, min_rsa_bits, min_ec_bits) describes a key that is too weak; undefined for a
# strong key or an unknown size. DSA is always weak; ED25519 never is.
weak_key(cert, min_rsa_bits, _) := sprintf("RSA-%d key (minimum %d bits)", [cert.key_size, min_rsa_bits]) if {
	upper(cert.key_algorithm) == "RSA"
	is_number(cert.key_size)
	cert.key_size < min_rsa_bits
}

weak_key(cert, _, min_ec_bits) := sprintf("EC-%d key (minimum %d bits)", [cert.key_size, min_ec_bits]) if {
	upper(cert.key_algorithm) == "EC"
	is_number(cert.key_size)
	cert.key_size < min_ec_bits
}

weak_key(cert, _, _) := "DSA key" if upper(cert.key_algorithm) == "DSA"

# weak_hashes are digests whose collisions are practical (or worse); Go's x509 names carry
# them as SHA1-RSA, ECDSA-SHA1, DSA-SHA1, MD5-RSA, MD2-RSA.
weak_hashes := {"SHA1", "MD5", "MD2"}

# weak_signature(cert) holds when cert is signed with a weak hash.
weak_signature(cert) if {
	some part in split(upper(cert.signature_algorithm), "-")
	part in weak_hashes
}

# label(resource) names a certificate-bearing resource in messages.
# A resource without a name is named by its uid.
label(resource) := sprintf("%s %s", [kinds[resource.type], display.resource_name(resource)]) if {
	kinds[resource.type]
} else := display.resource_name(resource)

# cert_label(resource) names the certificate a resource holds or presents, in messages.
cert_label(resource) := sprintf("the certificate of endpoint %s", [display.resource_name(resource)]) if {
	resource.type == "tls.endpoint"
} else := label(resource)

kinds := {
	"aws.acm.certificate": "ACM certificate",
	"aws.iam.server_certificate": "IAM server certificate",
	"gcp.compute.ssl_certificate": "SSL certificate",
	"tls.endpoint": "endpoint",
}

# day(ts) is the date part of an RFC 3339 time, for messages.
day(ts) := substring(ts, 0, 10)

# --- the resource being evaluated ----------------------------------------------
#
# The rules below have no arguments and read input.resource: OPA computes each once per
# resource, and every policy of the resource's type shares the result, where the functions
# above would hash the whole resource or certificate (their arguments) on every call.

# resource_certificate is certificate(input.resource).
resource_certificate := cert if {
	input.resource.type != "tls.endpoint"
	cert := input.resource.attributes.certificate
	is_object(cert)
}

resource_certificate := cert if {
	input.resource.type == "tls.endpoint"
	input.resource.attributes.reachable == true
	cert := input.resource.attributes.certificate
	is_object(cert)
}

# resource_not_after_ns is the end of validity of resource_certificate, in nanoseconds.
# A certificate that never expires (far_future) has none.
resource_not_after_ns := time.parse_rfc3339_ns(resource_certificate.not_after) if {
	is_string(resource_certificate.not_after)
	not wtime.far_future(resource_certificate.not_after)
}

# resource_expired holds when expired(resource_certificate) does.
resource_expired if resource_not_after_ns < time.now_ns()

# resource_label is label(input.resource) and resource_cert_label cert_label(input.resource).
resource_label := sprintf("%s %s", [kinds[input.resource.type], display.name]) if {
	kinds[input.resource.type]
} else := display.name

resource_cert_label := sprintf("the certificate of endpoint %s", [display.name]) if {
	input.resource.type == "tls.endpoint"
} else := resource_label
