package warden.certs.iam_server_certificate_expired_test

import data.warden.certs.iam_server_certificate_expired

# 2026-11-30T12:00:00Z
now := 1796040000000000000

server_cert(not_after) := {"resource": {
	"uid": "arn:aws:iam::111111111111:server-certificate/legacy-shop-2025",
	"type": "aws.iam.server_certificate",
	"name": "legacy-shop-2025",
	"account": "111111111111",
	"region": "global",
	"attributes": {
		"server_certificate_id": "ASCA5XQ2JH7RLT4MB9PQE",
		"path": "/",
		"upload_date": "2025-03-12T10:15:00Z",
		"certificate": {
			"subject": "CN=shop.acme.example",
			"not_after": not_after,
			"key_algorithm": "RSA",
			"key_size": 2048,
			"signature_algorithm": "SHA256-RSA",
		},
	},
}}

test_expired if {
	iam_server_certificate_expired.deny == {{"msg": "IAM server certificate legacy-shop-2025 expired on 2026-03-15 (260 days ago)"}} with input as server_cert("2026-03-15T12:00:00Z")
		with time.now_ns as now
}

test_valid_is_a_near_miss if {
	count(iam_server_certificate_expired.deny) == 0 with input as server_cert("2026-11-30T12:00:01Z") with time.now_ns as now
}

test_expiring_soon_is_not_expired if {
	count(iam_server_certificate_expired.deny) == 0 with input as server_cert("2026-12-05T00:00:00Z") with time.now_ns as now
}

# --- messages never decide a violation -------------------------------------------

test_resource_without_name_still_violates if {
	given := server_cert("2026-03-15T12:00:00Z")
	want := {replace(v.msg, given.resource.name, given.resource.uid) | some v in iam_server_certificate_expired.deny with input as given with time.now_ns as now}
	count(want) > 0
	{v.msg | some v in iam_server_certificate_expired.deny with input as json.remove(given, ["resource/name"]) with time.now_ns as now} == want
}
