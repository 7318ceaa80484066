package warden.gcp.net.rdp_open_test

import data.warden.gcp.net.rdp_open

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

test_default_allow_rdp if {
	rdp_open.deny == {{"msg": "firewall rule default-allow-rdp on network default allows tcp 3389 from 0.0.0.0/0: RDP (3389) is open to the internet"}} with input as firewall("default-allow-rdp", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["3389"]}])
}

test_range_edges if {
	count(rdp_open.deny) == 1 with input as firewall("allow-range", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["3389-3390"]}])
	count(rdp_open.deny) == 1 with input as firewall("allow-range", ["0.0.0.0/0"], [{"protocol": "udp", "ports": ["3000-3389"]}])
	count(rdp_open.deny) == 0 with input as firewall("allow-range", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["3390-3400"]}])
	count(rdp_open.deny) == 0 with input as firewall("allow-range", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["3300-3388"]}])
}

test_near_miss_private_and_tagged_sources if {
	count(rdp_open.deny) == 0 with input as firewall("allow-rdp-internal", ["10.128.0.0/9"], [{"protocol": "tcp", "ports": ["3389"]}])
	count(rdp_open.deny) == 0 with input as with_attrs(firewall("allow-rdp-from-bastion", [], [{"protocol": "tcp", "ports": ["3389"]}]), {"source_tags": ["bastion"]})
}
