# METADATA
# title: Endpoint's chain holds a certificate with a weak signature or key
# description: Every certificate of the chain vouches for the next; an intermediate signed with SHA-1 or MD5 can be forged by collision, and an intermediate with a weak key (RSA under 2048 bits, EC under 256, DSA) can be broken, either way letting an attacker mint certificates the endpoint's clients accept. WARDEN-CERT-003 and -004 judge the leaf; this policy judges the rest of the chain the endpoint sends. A self-signed root's own signature is never relied on and is not judged. Renewing fetches a current chain from the CA.
# custom:
#   id: WARDEN-CERT-012
#   severity: high
#   resource_types: [tls.endpoint]
#   frameworks: {nist-800-53-r5: ["SC-13", "SC-17"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: certs.renew, risk: medium}
package warden.certs.weak_chain

import data.warden.lib.certs
import data.warden.lib.display

min_rsa_bits := n if {
	n := data.warden.config.min_rsa_bits
} else := 2048

min_ec_bits := n if {
	n := data.warden.config.min_ec_bits
} else := 256

# certs.probed(input.resource), as equalities that OPA's rule index checks without
# evaluating the rule.
chain := input.resource.attributes.chain if {
	input.resource.type == "tls.endpoint"
	input.resource.attributes.reachable == true
	is_array(input.resource.attributes.chain)
}

deny contains violation(i, c, "signature", sprintf("is signed with %s", [c.signature_algorithm])) if {
	some i, c in chain
	not c.self_signed == true
	certs.weak_signature(c)
}

deny contains violation(i, c, "key", sprintf("has a weak %s", [weakness])) if {
	some i, c in chain
	weakness := certs.weak_key(c, min_rsa_bits, min_ec_bits)
}

# The position counts from the leaf (1 is the certificate that signed it).
violation(i, c, part, what) := {
	"msg": sprintf("%s sends chain certificate %d (%s) that %s", [certs.resource_label, i + 1, display.field(c, "subject", "without a subject"), what]),
	"key": concat("/", [display.field(c, "serial", sprintf("position %d", [i + 1])), part]),
}
