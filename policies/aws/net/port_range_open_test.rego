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
		"msg": "security group prod-k8s-nodes (sg-0b7c1d2e3f4a5b6c7) allows tcp 30000-32767 from 0.0.0.0/0: 2768 ports open to the internet (at most 100)",
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
