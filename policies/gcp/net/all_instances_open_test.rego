package warden.gcp.net.all_instances_open_test

import data.warden.gcp.net.all_instances_open

firewall(name, source_ranges, allowed) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/firewalls/%s", [name]),
	"type": "gcp.compute.firewall",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"tags": {},
	"attributes": {
		"network": "prod",
		"direction": "INGRESS",
		"disabled": false,
		"priority": 1000,
		"source_ranges": source_ranges,
		"source_tags": [],
		"target_tags": [],
		"target_service_accounts": [],
		"allowed": allowed,
		"denied": [],
	},
}}

with_attrs(fw, attrs) := json.patch(fw, [{"op": "add", "path": sprintf("/resource/attributes/%s", [k]), "value": v} | some k, v in attrs])

no_name(inp) := json.patch(inp, [{"op": "remove", "path": "/resource/name"}])

test_rule_for_every_instance if {
	all_instances_open.deny == {{"msg": "firewall rule allow-web on network prod allows tcp 80,443 from 0.0.0.0/0 (every IPv4 address) to every instance of the network (no target tags or service accounts)"}} with input as firewall("allow-web", ["0.0.0.0/0", "10.0.0.0/8"], [{"protocol": "tcp", "ports": ["80", "443"]}])
}

test_without_name if {
	count(all_instances_open.deny) == 1 with input as no_name(firewall("allow-web", ["::/0"], [{"protocol": "tcp", "ports": ["443"]}]))
}

test_near_miss_scoped_by_tag_or_service_account if {
	fw := firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["443"]}])
	count(all_instances_open.deny) == 0 with input as with_attrs(fw, {"target_tags": ["web"]})
	count(all_instances_open.deny) == 0 with input as with_attrs(fw, {"target_service_accounts": ["web@acme-data-1193.iam.gserviceaccount.com"]})
}

test_near_miss_service_accounts_not_read if {
	fw := firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["443"]}])
	count(all_instances_open.deny) == 0 with input as json.patch(fw, [{"op": "remove", "path": "/resource/attributes/target_service_accounts"}])
}

test_near_miss_not_the_internet if {
	count(all_instances_open.deny) == 0 with input as firewall("allow-hc", ["35.191.0.0/16", "130.211.0.0/22", "8.8.8.0/25"], [{"protocol": "tcp", "ports": ["443"]}])
	count(all_instances_open.deny) == 0 with input as with_attrs(firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp"}]), {"disabled": true})
}

test_message_says_what_is_exposed if {
	fw := with_attrs(firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["443"]}]), {"targets": {"known": true, "instances": 6, "sample": ["a", "b", "c", "d", "e"]}})
	[v] := [v | some v in all_instances_open.deny] with input as fw
	endswith(v.msg, "to every instance of the network (no target tags or service accounts); it exposes 6 instances: a, b, c, d, e and 1 more")
}
