package warden.gcp.net.unused_rule_test

import data.warden.gcp.net.unused_rule

firewall(name, attrs) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/firewalls/%s", [name]),
	"type": "gcp.compute.firewall",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"scope": "gcp/acme-data-1193/compute",
	"tags": {},
	"attributes": object.union(
		{
			"network": "prod",
			"direction": "INGRESS",
			"disabled": false,
			"priority": 1000,
			"source_ranges": ["10.0.0.0/8"],
			"source_tags": [],
			"target_tags": ["legacy-db"],
			"target_service_accounts": [],
			"allowed": [{"protocol": "tcp", "ports": ["5432"]}],
			"denied": [],
			"targets": {"known": true, "instances": 0, "sample": []},
		},
		attrs,
	),
}}

test_tag_matching_no_instance if {
	unused_rule.deny == {{
		"msg": "firewall rule allow-legacy-db on network prod targets tag legacy-db, which no instance of the project on the network has: the rule applies to nothing",
		"key": "unused",
	}} with input as firewall("allow-legacy-db", {})
}

test_tags_and_service_accounts_are_named if {
	attrs := {"target_tags": [], "target_service_accounts": ["old-etl@acme-data-1193.iam.gserviceaccount.com", "gone@acme-data-1193.iam.gserviceaccount.com"]}
	[v] := [v | some v in unused_rule.deny] with input as firewall("allow-etl", attrs)
	v.msg == "firewall rule allow-etl on network prod targets service accounts old-etl@acme-data-1193.iam.gserviceaccount.com, gone@acme-data-1193.iam.gserviceaccount.com, which no instance of the project on the network has: the rule applies to nothing"

	both := {"target_tags": ["a", "b"], "target_service_accounts": ["x@p.iam.gserviceaccount.com"]}
	[w] := [w | some w in unused_rule.deny] with input as firewall("allow-both", both)
	contains(w.msg, "targets tags a, b and service account x@p.iam.gserviceaccount.com, which")
}

# A rule read without its name or network still violates.
test_without_optional_fields if {
	fw := json.remove(firewall("allow-legacy-db", {}), ["resource/name", "resource/attributes/network"])
	[v] := [v | some v in unused_rule.deny] with input as fw
	startswith(v.msg, "firewall rule //compute.googleapis.com/projects/acme-data-1193/global/firewalls/allow-legacy-db targets tag legacy-db")
}

# Near-misses.
test_one_matching_instance_is_used if {
	count(unused_rule.deny) == 0 with input as firewall("allow-db", {"targets": {"known": true, "instances": 1, "sample": ["db-1"]}})
}

test_unknown_targets_decide_nothing if {
	count(unused_rule.deny) == 0 with input as firewall("allow-legacy-db", {"targets": {"known": false, "error": "compute.AggregatedListInstances: PermissionDenied: denied"}})
	count(unused_rule.deny) == 0 with input as json.remove(firewall("allow-legacy-db", {}), ["resource/attributes/targets"])
	count(unused_rule.deny) == 0 with input as firewall("allow-legacy-db", {"targets": {"known": "true", "instances": 0}})
}

# A rule without targets applies to the whole network: an empty network is not a stale rule.
test_rule_for_every_instance_of_an_empty_network if {
	count(unused_rule.deny) == 0 with input as firewall("allow-internal", {"target_tags": [], "target_service_accounts": []})
	count(unused_rule.deny) == 0 with input as json.remove(firewall("allow-internal", {"target_tags": []}), ["resource/attributes/target_service_accounts"])
}

test_disabled_rule if {
	count(unused_rule.deny) == 0 with input as firewall("allow-legacy-db", {"disabled": true})
}

test_egress_rule if {
	attrs := {"direction": "EGRESS", "source_ranges": [], "destination_ranges": ["0.0.0.0/0"]}
	count(unused_rule.deny) == 0 with input as firewall("allow-legacy-out", attrs)
}

test_deny_rule if {
	attrs := {"allowed": [], "denied": [{"protocol": "all"}]}
	count(unused_rule.deny) == 0 with input as firewall("deny-legacy", attrs)
}
