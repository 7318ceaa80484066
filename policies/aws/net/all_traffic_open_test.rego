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
		"msg": "security group staging-debug (sg-0b7c1d2e3f4a5b6c7) allows all traffic from 0.0.0.0/0: every port is open to the internet",
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
