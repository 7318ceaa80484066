package warden.aws.net.rdp_open_test

import data.warden.aws.net.rdp_open

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
	"name": "prod-windows-jump",
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "prod-windows-jump",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"description": "prod-windows-jump",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_rdp_open_to_ipv4_internet if {
	r := rule("tcp", 3389, 3389, "0.0.0.0/0")
	rdp_open.deny == {{
		"msg": "security group prod-windows-jump (sg-0b7c1d2e3f4a5b6c7) allows tcp 3389 from 0.0.0.0/0: RDP (3389) is open to the internet",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_rdp_open_to_ipv6_internet_over_udp if {
	count(rdp_open.deny) == 1 with input as sg([rule("udp", 3389, 3389, "::/0")])
}

test_all_protocols_open_rdp if {
	count(rdp_open.deny) == 1 with input as sg([rule("-1", -1, -1, "::/0")])
}

test_range_edges if {
	count(rdp_open.deny) == 1 with input as sg([rule("tcp", 3389, 3390, "0.0.0.0/0")])
	count(rdp_open.deny) == 1 with input as sg([rule("tcp", 3000, 3389, "0.0.0.0/0")])
	count(rdp_open.deny) == 0 with input as sg([rule("tcp", 3390, 3400, "0.0.0.0/0")])
	count(rdp_open.deny) == 0 with input as sg([rule("tcp", 3300, 3388, "0.0.0.0/0")])
}

test_near_miss_private_source if {
	count(rdp_open.deny) == 0 with input as sg([rule("tcp", 3389, 3389, "10.0.0.0/8")])
}

test_near_miss_ssh_only if {
	count(rdp_open.deny) == 0 with input as sg([rule("tcp", 22, 22, "0.0.0.0/0")])
}
