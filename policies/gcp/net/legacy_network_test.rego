package warden.gcp.net.legacy_network_test

import data.warden.gcp.net.legacy_network

network(name, attrs) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/networks/%s", [name]),
	"type": "gcp.compute.network",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"tags": {},
	"attributes": object.union({"firewalls": []}, attrs),
}}

test_legacy_network if {
	legacy_network.deny == {{"msg": "network old-net of project acme-data-1193 is a legacy network"}} with input as network("old-net", {"mode": "legacy"})
}

test_without_name if {
	inp := json.patch(network("old-net", {"mode": "legacy"}), [{"op": "remove", "path": "/resource/name"}])
	count(legacy_network.deny) == 1 with input as inp
}

test_near_miss_vpc_networks_and_unread_mode if {
	count(legacy_network.deny) == 0 with input as network("prod", {"mode": "custom", "auto_create_subnetworks": false})
	count(legacy_network.deny) == 0 with input as network("default", {"mode": "auto", "auto_create_subnetworks": true})

	# mode not read (older snapshot): not decided
	count(legacy_network.deny) == 0 with input as network("old-net", {})
}
