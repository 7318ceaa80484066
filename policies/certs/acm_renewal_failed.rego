# METADATA
# title: ACM certificate's managed renewal failed
# description: ACM could not renew the certificate (usually a validation record or CAA problem); it will expire unless someone fixes the cause. No fix is automated because the cause lies outside the certificate (a DNS validation record, a CAA record, a domain's contact address) and must be corrected there.
# custom:
#   id: WARDEN-CERT-008
#   severity: high
#   resource_types: [aws.acm.certificate]
#   frameworks: {nist-800-53-r5: ["SC-17"], soc2: ["CC6.7"], iso-27001-2022: ["A.8.24"]}
#   remediation: {action: notify, risk: none}
package warden.certs.acm_renewal_failed

import data.warden.lib.certs

# renewal_status == "FAILED" lets OPA's rule index skip every other certificate without
# evaluating the rule.
deny contains violation if {
	input.resource.attributes.renewal_status == "FAILED"
	violation := {
		"msg": sprintf("%s failed managed renewal%s", [certs.resource_label, reason]),
		"renewal_failure_reason": object.get(input.resource.attributes, "renewal_failure_reason", ""),
	}
}

reason := sprintf(" (%s)", [input.resource.attributes.renewal_failure_reason]) if {
	is_string(input.resource.attributes.renewal_failure_reason)
	input.resource.attributes.renewal_failure_reason != ""
} else := ""
