package warden.gcp.net.default_network_test

import data.warden.gcp.net.default_network

network(name, firewalls) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/networks/%s", [name]),
	"type": "gcp.compute.network",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"scope": "gcp/acme-data-1193/compute",
	"tags": {},
	"attributes": {"auto_create_subnetworks": true, "firewalls": firewalls},
}}

test_default_network_with_default_rules if {
	default_network.deny == {{
		"msg": "project acme-data-1193 still has the default network with its default rules default-allow-icmp, default-allow-internal, default-allow-rdp, default-allow-ssh",
		"firewalls": ["default-allow-icmp", "default-allow-internal", "default-allow-rdp", "default-allow-ssh"],
	}} with input as network("default", ["default-allow-ssh", "default-allow-rdp", "default-allow-internal", "default-allow-icmp", "allow-iap-ssh"])
}

test_one_default_rule_left if {
	count(default_network.deny) == 1 with input as network("default", ["default-allow-internal"])
}

test_default_rules_removed_network_still_there if {
	# CIS GCP 2.0 3.1: the default network itself must not exist
	default_network.deny == {{"msg": "project acme-data-1193 still has the default network (its default rules are gone)", "firewalls": []}} with input as network("default", ["allow-iap-ssh"])
	count(default_network.deny) == 1 with input as network("default", [])
}

test_near_miss_other_network if {
	count(default_network.deny) == 0 with input as network("prod-vpc", ["default-allow-internal"])
	count(default_network.deny) == 0 with input as network("default-vpc", [])
}

test_network_without_name_or_account_is_judged_by_its_uid if {
	net := network("default", ["default-allow-ssh"])
	default_network.deny == {{
		"msg": "project //compute.googleapis.com/projects/acme-data-1193/global/networks/default still has the default network with its default rules default-allow-ssh",
		"firewalls": ["default-allow-ssh"],
	}} with input as json.remove(net, ["resource/name", "resource/account"])
	count(default_network.deny) == 0 with input as json.remove(network("prod-vpc", ["default-allow-ssh"]), ["resource/name"])
}
