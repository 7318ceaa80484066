package warden.gcp.net.telnet_open_test

import data.warden.gcp.net.telnet_open

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
		"target_tags": ["svc"],
		"allowed": allowed,
		"denied": [],
	},
}}

with_attrs(fw, attrs) := json.patch(fw, [{"op": "add", "path": sprintf("/resource/attributes/%s", [k]), "value": v} | some k, v in attrs])

test_open_to_internet if {
	telnet_open.deny == {{
		"msg": "firewall rule allow-svc on network prod allows tcp 23 from 0.0.0.0/0 (every IPv4 address): Telnet (23) is open to the internet",
		"ports": [23],
	}} with input as firewall("allow-svc", ["0.0.0.0/0", "10.0.0.0/8"], [{"protocol": "tcp", "ports": ["23"]}, {"protocol": "icmp"}])
}

test_ipv6_range_over_every_service_port_without_name if {
	inp := json.patch(firewall("allow-range", ["::/0"], [{"protocol": "tcp", "ports": ["23-23"]}]), [{"op": "remove", "path": "/resource/name"}])
	some v in telnet_open.deny with input as inp
	v.ports == [23]
}

test_near_miss_every_port_is_all_traffic_finding if {
	# one exposure, one finding: WARDEN-GCP-NET-003 reports it
	count(telnet_open.deny) == 0 with input as firewall("allow-all", ["0.0.0.0/0"], [{"protocol": "all"}, {"protocol": "tcp"}, {"protocol": "udp", "ports": ["0-65535"]}])
}

test_near_miss_port_just_outside if {
	count(telnet_open.deny) == 0 with input as firewall("allow-svc", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["24"]}])
}

test_near_miss_not_the_internet if {
	# a public /25 is narrower than internet_max_prefix_v4; 35.235.240.0/20 is IAP
	count(telnet_open.deny) == 0 with input as firewall("allow-svc", ["8.8.8.0/25", "35.235.240.0/20", "192.168.0.0/16"], [{"protocol": "tcp", "ports": ["23"]}])
}

test_near_miss_disabled_or_egress if {
	fw := firewall("allow-svc", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["23"]}])
	count(telnet_open.deny) == 0 with input as with_attrs(fw, {"disabled": true})
	count(telnet_open.deny) == 0 with input as with_attrs(fw, {"direction": "EGRESS"})
}

# Service findings say what the rule exposes, with the same ports and finding.
test_message_says_what_is_exposed if {
	fw := with_attrs(firewall("allow-svc", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["23"]}]), {"targets": {"known": true, "instances": 1, "sample": ["legacy-switch"]}})
	telnet_open.deny == {{
		"msg": "firewall rule allow-svc on network prod allows tcp 23 from 0.0.0.0/0 (every IPv4 address): Telnet (23) is open to the internet; it exposes 1 instance: legacy-switch",
		"ports": [23],
	}} with input as fw
}
