package warden.gcp.net.public_port_policy_open_test

import data.warden.gcp.net.public_port_policy_open

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

test_non_public_ports_open if {
	public_port_policy_open.deny == {{"msg": "firewall rule allow-web on network prod allows tcp 80,443,8443 from 0.0.0.0/0 (every IPv4 address): ports tcp 8443 are open to the internet but are not public ports (80, 443) and no other policy names them"}} with input as firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["80", "443", "8443"]}, {"protocol": "udp", "ports": ["443"]}])
}

test_range_around_public_ports_without_name if {
	some v in public_port_policy_open.deny with input as no_name(firewall("allow-range", ["::/0"], [{"protocol": "tcp", "ports": ["76-444"]}]))

	# 110, 135, 137-139 and 143 have policies of their own
	contains(v.msg, "ports tcp 76-79,81-109,111-134,136,140-142,144-442,444 are open")
}

test_near_miss_public_ports_only if {
	count(public_port_policy_open.deny) == 0 with input as firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["80", "443"]}, {"protocol": "icmp"}])
}

test_near_miss_all_ports_iap_and_setting if {
	# every port is WARDEN-GCP-NET-003's finding; IAP is not the internet
	count(public_port_policy_open.deny) == 0 with input as firewall("allow-all", ["0.0.0.0/0"], [{"protocol": "all"}])
	count(public_port_policy_open.deny) == 0 with input as firewall("allow-iap", ["35.235.240.0/20"], [{"protocol": "tcp", "ports": ["22"]}])
	count(public_port_policy_open.deny) == 0 with input as firewall("allow-alt", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["8443"]}])
		with data.warden.config.public_ports as [443, 8443]
}
