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
	all_traffic_open.deny == {{"msg": "firewall rule allow-all-debug on network default allows all traffic from 0.0.0.0/0 (every IPv4 address), ::/0 (every IPv6 address): every port is open to the internet"}} with input as firewall("allow-all-debug", ["::/0", "0.0.0.0/0"], [{"protocol": "all"}])
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

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every sources in [["0.0.0.0/1"], ["0.0.0.0/1", "128.0.0.0/1"], ["8.0.0.0/8"], ["::/1"], ["2000::/3"], ["0.0.0.0/33"], ["10.0.0.0/8", "8.0.0.0/8"]] {
		count(all_traffic_open.deny) == 1 with input as firewall("allow-wide", sources, [{"protocol": "all"}])
	}
}

test_message_says_how_wide_the_ranges_are if {
	all_traffic_open.deny == {{"msg": "firewall rule allow-wide on network default allows all traffic from 0.0.0.0/1 (2147483648 addresses), 128.0.0.0/1 (2147483648 addresses): every port is open to the internet"}} with input as firewall("allow-wide", ["128.0.0.0/1", "10.0.0.0/8", "0.0.0.0/1"], [{"protocol": "all"}])
}

test_near_miss_special_purpose_or_narrow_range if {
	every sources in [["10.0.0.0/8"], ["100.64.0.0/10"], ["192.0.2.0/24"], ["203.0.113.5/32"], ["203.0.113.5"], ["8.8.8.0/25"], ["fc00::/7"], ["10.0.0.0/8", "8.8.8.8/32"]] {
		count(all_traffic_open.deny) == 0 with input as firewall("allow-narrow", sources, [{"protocol": "all"}])
	}
}

test_near_miss_google_proxies_and_probes if {
	every sources in [["35.235.240.0/20"], ["35.191.0.0/16", "130.211.0.0/22"]] {
		count(all_traffic_open.deny) == 0 with input as firewall("allow-google", sources, [{"protocol": "all"}])
		count(all_traffic_open.deny) == 1 with input as firewall("allow-google", sources, [{"protocol": "all"}])
			with data.warden.config.gcp_trusted_source_ranges as []
	}
}

# --- messages never decide a violation -------------------------------------------

test_firewall_without_name_or_network_still_violates if {
	fw := firewall("allow-wide", ["0.0.0.0/1"], [{"protocol": "all"}])
	some v in all_traffic_open.deny with input as {"resource": object.remove(fw.resource, ["name"])}
	v.msg == "firewall rule //compute.googleapis.com/projects/acme-data-1193/global/firewalls/allow-wide on network default allows all traffic from 0.0.0.0/1 (2147483648 addresses): every port is open to the internet"
	some w in all_traffic_open.deny with input as json.remove(fw, ["resource/name", "resource/attributes/network"])
	w.msg == "firewall rule //compute.googleapis.com/projects/acme-data-1193/global/firewalls/allow-wide allows all traffic from 0.0.0.0/1 (2147483648 addresses): every port is open to the internet"
}
