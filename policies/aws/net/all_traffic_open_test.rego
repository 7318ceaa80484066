package warden.aws.net.all_traffic_open_test

import data.warden.aws.net.all_traffic_open

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
	"name": "staging-debug",
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "staging-debug",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"description": "staging-debug",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_all_protocols_to_internet if {
	r := rule("-1", -1, -1, "0.0.0.0/0")
	all_traffic_open.deny == {{
		"msg": "security group staging-debug (sg-0b7c1d2e3f4a5b6c7) allows all traffic from 0.0.0.0/0 (every IPv4 address): every port is open to the internet",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_all_protocols_to_ipv6_internet if {
	count(all_traffic_open.deny) == 1 with input as sg([rule("-1", -1, -1, "::/0")])
}

test_all_tcp_ports_to_internet if {
	count(all_traffic_open.deny) == 1 with input as sg([rule("tcp", 0, 65535, "0.0.0.0/0")])
	count(all_traffic_open.deny) == 1 with input as sg([rule("udp", 0, 65535, "::/0")])
}

test_ports_from_1_count_as_all if {
	count(all_traffic_open.deny) == 1 with input as sg([rule("tcp", 1, 65535, "0.0.0.0/0")])
}

test_near_miss_almost_every_port if {
	count(all_traffic_open.deny) == 0 with input as sg([rule("tcp", 1024, 65535, "0.0.0.0/0")])
	count(all_traffic_open.deny) == 0 with input as sg([rule("tcp", 0, 65534, "0.0.0.0/0")])
}

test_near_miss_private_source if {
	count(all_traffic_open.deny) == 0 with input as sg([rule("-1", -1, -1, "10.0.0.0/8")])
	count(all_traffic_open.deny) == 0 with input as sg([rule("tcp", 0, 65535, "172.16.0.0/12")])
}

test_near_miss_all_icmp if {
	count(all_traffic_open.deny) == 0 with input as sg([rule("icmp", -1, -1, "0.0.0.0/0")])
}

test_near_miss_egress_all_traffic if {
	# sg() always carries the usual egress rule: all traffic to 0.0.0.0/0.
	count(all_traffic_open.deny) == 0 with input as sg([rule("tcp", 443, 443, "0.0.0.0/0")])
}

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every cidr in ["0.0.0.0/1", "128.0.0.0/1", "8.0.0.0/8", "::/1", "2000::/3", "0.0.0.0/33"] {
		count(all_traffic_open.deny) == 1 with input as sg([rule("-1", -1, -1, cidr)])
	}
}

test_internet_split_in_halves_violates_once_per_half if {
	count(all_traffic_open.deny) == 2 with input as sg([rule("-1", -1, -1, "0.0.0.0/1"), rule("-1", -1, -1, "128.0.0.0/1")])
}

test_message_says_how_wide_the_range_is if {
	some v in all_traffic_open.deny with input as sg([rule("-1", -1, -1, "0.0.0.0/1")])
	v.msg == "security group staging-debug (sg-0b7c1d2e3f4a5b6c7) allows all traffic from 0.0.0.0/1 (2147483648 addresses): every port is open to the internet"
}

test_near_miss_special_purpose_or_narrow_range if {
	every cidr in ["10.0.0.0/8", "100.64.0.0/10", "192.0.2.0/24", "203.0.113.5/32", "8.8.8.0/25", "fc00::/7", "2a00:1450:4001:800::/64"] {
		count(all_traffic_open.deny) == 0 with input as sg([rule("-1", -1, -1, cidr)])
	}
}

test_wide_prefix_is_a_setting if {
	count(all_traffic_open.deny) == 1 with input as sg([rule("-1", -1, -1, "8.8.8.0/25")])
		with data.warden.config.internet_max_prefix_v4 as 25
}

# --- messages never decide a violation -------------------------------------------

test_group_without_name_or_group_id_still_violates if {
	r := rule("-1", -1, -1, "0.0.0.0/1")
	some v in all_traffic_open.deny with input as {"resource": object.remove(sg([r]).resource, ["name"])}
	v.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 (sg-0b7c1d2e3f4a5b6c7) allows all traffic from 0.0.0.0/1 (2147483648 addresses): every port is open to the internet"
	no_ids := json.remove(sg([r]), ["resource/name", "resource/attributes/group_id"])
	some w in all_traffic_open.deny with input as no_ids
	w.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 allows all traffic from 0.0.0.0/1 (2147483648 addresses): every port is open to the internet"
}
