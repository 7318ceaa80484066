package warden.gcp.net.ssh_open_test

import data.warden.gcp.net.ssh_open

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

test_default_allow_ssh if {
	ssh_open.deny == {{"msg": "firewall rule default-allow-ssh on network default allows tcp 22 from 0.0.0.0/0: SSH (22) is open to the internet"}} with input as firewall("default-allow-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["22"]}])
}

test_ipv6_source_and_several_entries if {
	ssh_open.deny == {{"msg": "firewall rule allow-admin on network default allows tcp 22,443, udp 0-65535 from ::/0: SSH (22) is open to the internet"}} with input as firewall("allow-admin", ["::/0", "10.0.0.0/8"], [{"protocol": "tcp", "ports": ["22", "443"]}, {"protocol": "udp"}, {"protocol": "icmp"}])
}

test_port_range_and_all_protocols if {
	count(ssh_open.deny) == 1 with input as firewall("allow-low-ports", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["20-23"]}])
	count(ssh_open.deny) == 1 with input as firewall("allow-all", ["0.0.0.0/0"], [{"protocol": "all"}])
	count(ssh_open.deny) == 1 with input as firewall("allow-tcp", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": []}])
}

test_near_miss_iap_range if {
	count(ssh_open.deny) == 0 with input as firewall("allow-iap-ssh", ["35.235.240.0/20"], [{"protocol": "tcp", "ports": ["22"]}])
}

test_near_miss_other_port if {
	count(ssh_open.deny) == 0 with input as firewall("allow-alt-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["2222", "23-80"]}])
	count(ssh_open.deny) == 0 with input as firewall("default-allow-icmp", ["0.0.0.0/0"], [{"protocol": "icmp"}])
}

test_near_miss_disabled_or_egress if {
	fw := firewall("default-allow-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["22"]}])
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"disabled": true})
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"direction": "EGRESS"})
}

test_near_miss_deny_rule if {
	fw := firewall("deny-ssh", ["0.0.0.0/0"], [])
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"denied": [{"protocol": "tcp", "ports": ["22"]}]})
}
