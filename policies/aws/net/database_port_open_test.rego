package warden.aws.net.database_port_open_test

import data.warden.aws.net.database_port_open

sg_arn := "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7"

rule(protocol, from, to, cidr) := {
	"id": sprintf("%s#ingress/%s/%d-%d/%s", [sg_arn, protocol, from, to, cidr]),
	"direction": "ingress",
	"protocol": protocol,
	"from_port": from,
	"to_port": to,
	"cidr": cidr,
	"source_group": "",
	"description": "",
}

sg(ingress) := {"resource": {
	"uid": sg_arn,
	"type": "aws.ec2.security_group",
	"name": "prod-legacy-reporting",
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "prod-legacy-reporting",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"description": "prod-legacy-reporting",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_mysql_open_to_internet if {
	r := rule("tcp", 3306, 3306, "0.0.0.0/0")
	database_port_open.deny == {{
		"msg": "security group prod-legacy-reporting (sg-0b7c1d2e3f4a5b6c7) allows tcp 3306 from 0.0.0.0/0 (every IPv4 address), which opens database and cache ports to the internet (3306)",
		"key": r.id,
		"target": r.id,
		"ports": [3306],
	}} with input as sg([r])
}

test_redis_open_to_ipv6_internet if {
	count(database_port_open.deny) == 1 with input as sg([rule("tcp", 6379, 6379, "::/0")])
}

test_range_lists_every_database_port_inside if {
	some v in database_port_open.deny with input as sg([rule("tcp", 5000, 7000, "0.0.0.0/0")])
	v.ports == [5432, 5984, 6379, 7000]
}

test_all_traffic_opens_database_ports if {
	some v in database_port_open.deny with input as sg([rule("-1", -1, -1, "0.0.0.0/0")])
	v.ports == [1433, 1521, 2379, 3306, 5432, 5984, 6379, 7000, 7001, 8529, 9042, 9200, 9300, 11211, 27017, 27018, 50000]
}

test_near_miss_neighbouring_ports if {
	count(database_port_open.deny) == 0 with input as sg([rule("tcp", 3307, 3310, "0.0.0.0/0")])
	count(database_port_open.deny) == 0 with input as sg([rule("tcp", 5433, 5433, "0.0.0.0/0")])
	count(database_port_open.deny) == 0 with input as sg([rule("tcp", 443, 443, "0.0.0.0/0")])
}

test_near_miss_private_source if {
	count(database_port_open.deny) == 0 with input as sg([rule("tcp", 5432, 5432, "10.0.0.0/8")])
}

test_near_miss_app_tier_source_group if {
	r := object.union(rule("tcp", 5432, 5432, ""), {"source_group": "sg-0aa1bb2cc3dd4ee5f"})
	count(database_port_open.deny) == 0 with input as sg([r])
}

test_ports_from_config if {
	count(database_port_open.deny) == 1 with input as sg([rule("tcp", 8086, 8086, "0.0.0.0/0")])
		with data.warden.config.database_ports as [8086]
	count(database_port_open.deny) == 0 with input as sg([rule("tcp", 3306, 3306, "0.0.0.0/0")])
		with data.warden.config.database_ports as [8086]
}

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every cidr in ["0.0.0.0/1", "128.0.0.0/1", "8.0.0.0/8", "::/1", "2000::/3", "0.0.0.0/33"] {
		count(database_port_open.deny) == 1 with input as sg([rule("tcp", 5432, 5432, cidr)])
	}
}

test_internet_split_in_halves_violates_once_per_half if {
	count(database_port_open.deny) == 2 with input as sg([rule("tcp", 5432, 5432, "0.0.0.0/1"), rule("tcp", 5432, 5432, "128.0.0.0/1")])
}

test_message_says_how_wide_the_range_is if {
	some v in database_port_open.deny with input as sg([rule("tcp", 5432, 5432, "0.0.0.0/1")])
	v.msg == "security group prod-legacy-reporting (sg-0b7c1d2e3f4a5b6c7) allows tcp 5432 from 0.0.0.0/1 (2147483648 addresses), which opens database and cache ports to the internet (5432)"
}

test_near_miss_special_purpose_or_narrow_range if {
	every cidr in ["10.0.0.0/8", "100.64.0.0/10", "192.0.2.0/24", "203.0.113.5/32", "8.8.8.0/25", "fc00::/7", "2a00:1450:4001:800::/64"] {
		count(database_port_open.deny) == 0 with input as sg([rule("tcp", 5432, 5432, cidr)])
	}
}

test_wide_prefix_is_a_setting if {
	count(database_port_open.deny) == 1 with input as sg([rule("tcp", 5432, 5432, "8.8.8.0/25")])
		with data.warden.config.internet_max_prefix_v4 as 25
}

# --- messages never decide a violation -------------------------------------------

test_group_without_name_or_group_id_still_violates if {
	r := rule("tcp", 5432, 5432, "0.0.0.0/1")
	some v in database_port_open.deny with input as {"resource": object.remove(sg([r]).resource, ["name"])}
	v.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 (sg-0b7c1d2e3f4a5b6c7) allows tcp 5432 from 0.0.0.0/1 (2147483648 addresses), which opens database and cache ports to the internet (5432)"
	no_ids := json.remove(sg([r]), ["resource/name", "resource/attributes/group_id"])
	some w in database_port_open.deny with input as no_ids
	w.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 allows tcp 5432 from 0.0.0.0/1 (2147483648 addresses), which opens database and cache ports to the internet (5432)"
}
