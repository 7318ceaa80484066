# METADATA
# title: IAM server certificate has expired
# description: An expired certificate left in IAM can be deployed to a load balancer or CloudFront by mistake; delete it.
# custom:
#   id: WARDEN-CERT-009
#   severity: medium
#   resource_types: [aws.iam.server_certificate]
#   frameworks: {cis-aws-3.0: ["1.19"], nist-800-53-r5: ["SC-17"], pci-dss-4.0: ["4.2.1"], iso-27001-2022: ["A.8.24"]}
#   prowler: [iam_no_expired_server_certificates_stored]
#   remediation: {action: aws.iam.delete_server_certificate, risk: low}
package warden.certs.iam_server_certificate_expired

import data.warden.lib.certs
import data.warden.lib.time as wtime

# certs.resource_expired is computed once per resource and shared with the other policies.
deny contains violation if {
	certs.resource_expired
	not_after := certs.resource_certificate.not_after
	violation := {"msg": sprintf(
		"%s expired on %s (%d days ago)",
		[certs.resource_label, certs.day(not_after), wtime.days_since(not_after)],
	)}
}
