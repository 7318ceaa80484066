# METADATA
# title: ACM certificate's managed renewal failed
# description: ACM could not renew the certificate (usually a validation record or CAA problem); it will expire unless someone fixes the cause.
# custom:
#   id: WARDEN-CERT-008
#   severity: high
#   resource_types: [aws.acm.certificate]
#   frameworks: {nist-800-53-r5: ["SC-17"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.acm_renewal_failed

import data.warden.lib.certs

attrs := input.resource.attributes

deny contains violation if {
	attrs.renewal_status == "FAILED"
	violation := {
		"msg": sprintf("%s failed managed renewal%s", [certs.label(input.resource), reason]),
		"renewal_failure_reason": object.get(attrs, "renewal_failure_reason", ""),
	}
}

reason := sprintf(" (%s)", [attrs.renewal_failure_reason]) if {
	is_string(attrs.renewal_failure_reason)
	attrs.renewal_failure_reason != ""
} else := ""
