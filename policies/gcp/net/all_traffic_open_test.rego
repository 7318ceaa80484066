package warden.gcp.net.all_traffic_open_test

import data.warden.gcp.net.all_traffic_open

firewall(name, source_ranges, allowed) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/firewalls/%s", [name]),
	"type": "gcp.compute.firewall",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"scope": "gcp/acme-data-1193/compute",
	"tags": {},
	"attributes": {
		"network": "default",
		"direction": "INGRESS",
		"disabled": false,
		"priority": 65534,
		"source_ranges": source_ranges,
		"source_tags": [],
		"target_tags": [],
		"allowed": allowed,
		"denied": [],
	},
}}

with_attrs(fw, attrs) := json.patch(fw, [{"op": "add", "path": sprintf("/resource/attributes/%s", [k]), "value": v} | some k, v in attrs])

test_all_protocols if {
	all_traffic_open.deny == {{"msg": "firewall rule allow-all-debug on network default allows all traffic from 0.0.0.0/0, ::/0: every port is open to the internet"}} with input as firewall("allow-all-debug", ["::/0", "0.0.0.0/0"], [{"protocol": "all"}])
}

test_protocol_without_ports_means_every_port if {
	count(all_traffic_open.deny) == 1 with input as firewall("allow-tcp", ["0.0.0.0/0"], [{"protocol": "tcp"}])
	count(all_traffic_open.deny) == 1 with input as firewall("allow-udp", ["0.0.0.0/0"], [{"protocol": "udp", "ports": []}])
}

test_full_port_range if {
	count(all_traffic_open.deny) == 1 with input as firewall("allow-tcp", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["0-65535"]}])
	count(all_traffic_open.deny) == 1 with input as firewall("allow-tcp", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["1-65535"]}])
}

test_near_miss_wide_but_not_every_port if {
	count(all_traffic_open.deny) == 0 with input as firewall("allow-high", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["1024-65535"]}])
}

test_near_miss_icmp_from_internet if {
	count(all_traffic_open.deny) == 0 with input as firewall("default-allow-icmp", ["0.0.0.0/0"], [{"protocol": "icmp"}])
}

test_near_miss_default_allow_internal if {
	count(all_traffic_open.deny) == 0 with input as firewall("default-allow-internal", ["10.128.0.0/9"], [
		{"protocol": "tcp", "ports": ["0-65535"]},
		{"protocol": "udp", "ports": ["0-65535"]},
		{"protocol": "icmp"},
	])
}
