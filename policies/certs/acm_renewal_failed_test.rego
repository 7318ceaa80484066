package warden.certs.acm_renewal_failed_test

import data.warden.certs.acm_renewal_failed

acm(status, reason) := {"resource": {
	"uid": "arn:aws:acm:eu-west-1:222222222222:certificate/0e9b3f52-6c4a-4d8e-a7f1-3c2b5d8e9f10",
	"type": "aws.acm.certificate",
	"name": "*.staging.acme.example",
	"attributes": {
		"cert_type": "AMAZON_ISSUED",
		"status": "ISSUED",
		"renewal_eligibility": "ELIGIBLE",
		"renewal_status": status,
		"renewal_failure_reason": reason,
	},
}}

test_failed_renewal if {
	acm_renewal_failed.deny == {{
		"msg": "ACM certificate *.staging.acme.example failed managed renewal (CAA_ERROR)",
		"renewal_failure_reason": "CAA_ERROR",
	}} with input as acm("FAILED", "CAA_ERROR")
}

test_failed_renewal_without_reason if {
	acm_renewal_failed.deny == {{
		"msg": "ACM certificate *.staging.acme.example failed managed renewal",
		"renewal_failure_reason": "",
	}} with input as acm("FAILED", "")
}

test_pending_validation_is_a_near_miss if {
	count(acm_renewal_failed.deny) == 0 with input as acm("PENDING_VALIDATION", "")
	count(acm_renewal_failed.deny) == 0 with input as acm("SUCCESS", "")
	count(acm_renewal_failed.deny) == 0 with input as acm("", "")
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := acm("FAILED", "CAA_ERROR")
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in acm_renewal_failed.deny with input as given}
	count(want) > 0
	{v.msg | some v in acm_renewal_failed.deny with input as json.remove(given, ["resource/name"])} == want
}
