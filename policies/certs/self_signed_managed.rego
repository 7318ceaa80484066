# METADATA
# title: Self-signed certificate is served by a load balancer
# description: A self-signed certificate imported into ACM and attached to a load balancer or CloudFront, or uploaded to a Google Cloud load balancer, proves nothing to clients; they either fail or are set to skip verification, and then accept an attacker's certificate as readily. Endpoints warden probes are judged by WARDEN-CERT-005. No fix is automated because a replacement needs a CA the clients trust (public, or the organisation's own), which warden cannot choose.
# custom:
#   id: WARDEN-CERT-013
#   severity: medium
#   resource_types: [aws.acm.certificate, gcp.compute.ssl_certificate]
#   frameworks: {nist-800-53-r5: ["SC-8", "SC-17"], pci-dss-4.0: ["4.2.1"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.self_signed_managed

import data.warden.lib.certs

# An imported ACM certificate counts once something uses it; a self-managed GCP
# certificate exists only to be attached to a load balancer's target proxy.
served := sprintf("is attached to %d resources", [count(input.resource.attributes.in_use_by)]) if {
	input.resource.type == "aws.acm.certificate"
	input.resource.attributes.cert_type == "IMPORTED"
	count(input.resource.attributes.in_use_by) > 1
} else := "is attached to 1 resource" if {
	input.resource.type == "aws.acm.certificate"
	input.resource.attributes.cert_type == "IMPORTED"
	count(input.resource.attributes.in_use_by) == 1
} else := "is uploaded for a load balancer" if {
	input.resource.type == "gcp.compute.ssl_certificate"
	input.resource.attributes.cert_type == "SELF_MANAGED"
}

deny contains violation if {
	input.resource.attributes.certificate.self_signed == true
	cert := certs.resource_certificate
	not certs.resource_expired
	violation := {"msg": sprintf(
		"%s is self-signed (%s) and %s: clients cannot tell it from an attacker's",
		[certs.resource_label, object.get(cert, "subject", "no subject"), served],
	)}
}
