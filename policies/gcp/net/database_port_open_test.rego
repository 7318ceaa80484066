package warden.gcp.net.database_port_open_test

import data.warden.gcp.net.database_port_open

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

test_postgres_open if {
	database_port_open.deny == {{
		"msg": "firewall rule allow-postgres-public on network default allows tcp 5432 from 0.0.0.0/0, which opens database and cache ports to the internet (5432)",
		"ports": [5432],
	}} with input as firewall("allow-postgres-public", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["5432"]}])
}

test_ports_across_entries_and_ranges if {
	database_port_open.deny == {{
		"msg": "firewall rule allow-app-ports on network default allows tcp 443,3000-3400, udp 11211 from ::/0, which opens database and cache ports to the internet (3306, 11211)",
		"ports": [3306, 11211],
	}} with input as firewall("allow-app-ports", ["::/0"], [
		{"protocol": "tcp", "ports": ["443", "3000-3400"]},
		{"protocol": "udp", "ports": ["11211"]},
		{"protocol": "icmp"},
	])
}

test_near_miss_neighbouring_ports if {
	count(database_port_open.deny) == 0 with input as firewall("allow-web", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["80", "443", "8000-8080", "6380"]}])
}

test_near_miss_private_source if {
	count(database_port_open.deny) == 0 with input as firewall("allow-mongo-internal", ["10.10.0.0/16"], [{"protocol": "tcp", "ports": ["27017"]}])
}

test_ports_from_config if {
	count(database_port_open.deny) == 1 with input as firewall("allow-influx", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["8086"]}])
		with data.warden.config.database_ports as [8086]
}
