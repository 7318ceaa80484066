package warden.aws.net.port_range_open_test

import data.warden.aws.net.port_range_open

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
	"name": "prod-k8s-nodes",
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "prod-k8s-nodes",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"description": "prod-k8s-nodes",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_nodeport_range_open if {
	r := rule("tcp", 30000, 32767, "0.0.0.0/0")
	port_range_open.deny == {{
		"msg": "security group prod-k8s-nodes (sg-0b7c1d2e3f4a5b6c7) allows tcp 30000-32767 from 0.0.0.0/0 (every IPv4 address): 2768 ports open to the internet (at most 100)",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_101_ports_fire if {
	count(port_range_open.deny) == 1 with input as sg([rule("udp", 60000, 60100, "::/0")])
}

test_near_miss_exactly_100_ports if {
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 50100, 50199, "0.0.0.0/0")])
}

test_near_miss_every_port_is_net_003 if {
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 0, 65535, "0.0.0.0/0")])
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 1, 65535, "0.0.0.0/0")])
	count(port_range_open.deny) == 0 with input as sg([rule("-1", -1, -1, "0.0.0.0/0")])
}

test_near_miss_private_source if {
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 1024, 65535, "10.0.0.0/8")])
}

test_near_miss_icmp if {
	count(port_range_open.deny) == 0 with input as sg([rule("icmp", -1, -1, "0.0.0.0/0")])
}

test_limit_from_config if {
	count(port_range_open.deny) == 1 with input as sg([rule("tcp", 8000, 8020, "0.0.0.0/0")])
		with data.warden.config.max_open_port_range as 20
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 30000, 32767, "0.0.0.0/0")])
		with data.warden.config.max_open_port_range as 5000
}

test_every_port_of_a_protocol_is_left_to_all_traffic_open if {
	count(port_range_open.deny) == 0 with input as sg([rule("tcp", 0, 65535, "0.0.0.0/0")])
	count(port_range_open.deny) == 0 with input as sg([rule("udp", 1, 65535, "0.0.0.0/0")])
	count(port_range_open.deny) == 1 with input as sg([rule("udp", 2, 65535, "0.0.0.0/0")])
	count(port_range_open.deny) == 1 with input as sg([rule("TCP", 1000, 2000, "0.0.0.0/0")])
}

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every cidr in ["0.0.0.0/1", "128.0.0.0/1", "8.0.0.0/8", "::/1", "2000::/3", "0.0.0.0/33"] {
		count(port_range_open.deny) == 1 with input as sg([rule("tcp", 30000, 32767, cidr)])
	}
}

test_internet_split_in_halves_violates_once_per_half if {
	count(port_range_open.deny) == 2 with input as sg([rule("tcp", 30000, 32767, "0.0.0.0/1"), rule("tcp", 30000, 32767, "128.0.0.0/1")])
}

test_message_says_how_wide_the_range_is if {
	some v in port_range_open.deny with input as sg([rule("tcp", 30000, 32767, "0.0.0.0/1")])
	v.msg == "security group prod-k8s-nodes (sg-0b7c1d2e3f4a5b6c7) allows tcp 30000-32767 from 0.0.0.0/1 (2147483648 addresses): 2768 ports open to the internet (at most 100)"
}

test_near_miss_special_purpose_or_narrow_range if {
	every cidr in ["10.0.0.0/8", "100.64.0.0/10", "192.0.2.0/24", "203.0.113.5/32", "8.8.8.0/25", "fc00::/7", "2a00:1450:4001:800::/64"] {
		count(port_range_open.deny) == 0 with input as sg([rule("tcp", 30000, 32767, cidr)])
	}
}

test_wide_prefix_is_a_setting if {
	count(port_range_open.deny) == 1 with input as sg([rule("tcp", 30000, 32767, "8.8.8.0/25")])
		with data.warden.config.internet_max_prefix_v4 as 25
}

# --- messages never decide a violation -------------------------------------------

test_group_without_name_or_group_id_still_violates if {
	r := rule("tcp", 30000, 32767, "0.0.0.0/1")
	some v in port_range_open.deny with input as {"resource": object.remove(sg([r]).resource, ["name"])}
	v.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 (sg-0b7c1d2e3f4a5b6c7) allows tcp 30000-32767 from 0.0.0.0/1 (2147483648 addresses): 2768 ports open to the internet (at most 100)"
	no_ids := json.remove(sg([r]), ["resource/name", "resource/attributes/group_id"])
	some w in port_range_open.deny with input as no_ids
	w.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 allows tcp 30000-32767 from 0.0.0.0/1 (2147483648 addresses): 2768 ports open to the internet (at most 100)"
}
