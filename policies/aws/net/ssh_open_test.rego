package warden.aws.net.ssh_open_test

import data.warden.aws.net.ssh_open

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
	"name": "prod-bastion",
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "prod-bastion",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"description": "prod-bastion",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_ssh_open_to_ipv4_internet if {
	r := rule("tcp", 22, 22, "0.0.0.0/0")
	ssh_open.deny == {{
		"msg": "security group prod-bastion (sg-0b7c1d2e3f4a5b6c7) allows tcp 22 from 0.0.0.0/0: SSH (22) is open to the internet",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_ssh_open_to_ipv6_internet if {
	count(ssh_open.deny) == 1 with input as sg([rule("tcp", 22, 22, "::/0")])
}

test_one_violation_per_rule if {
	keys := {v.key | some v in ssh_open.deny} with input as sg([rule("tcp", 22, 22, "0.0.0.0/0"), rule("tcp", 22, 22, "::/0")])
	keys == {rule("tcp", 22, 22, "0.0.0.0/0").id, rule("tcp", 22, 22, "::/0").id}
}

test_range_containing_22 if {
	count(ssh_open.deny) == 1 with input as sg([rule("tcp", 0, 1023, "0.0.0.0/0")])
	count(ssh_open.deny) == 1 with input as sg([rule("tcp", 22, 23, "0.0.0.0/0")])
	count(ssh_open.deny) == 1 with input as sg([rule("tcp", 21, 22, "0.0.0.0/0")])
}

test_all_protocols_open_ssh if {
	count(ssh_open.deny) == 1 with input as sg([rule("-1", -1, -1, "0.0.0.0/0")])
}

test_near_miss_other_port if {
	count(ssh_open.deny) == 0 with input as sg([rule("tcp", 2222, 2222, "0.0.0.0/0")])
	count(ssh_open.deny) == 0 with input as sg([rule("tcp", 23, 1023, "0.0.0.0/0")])
	count(ssh_open.deny) == 0 with input as sg([rule("tcp", 1, 21, "0.0.0.0/0")])
}

test_near_miss_private_source if {
	count(ssh_open.deny) == 0 with input as sg([rule("tcp", 22, 22, "10.0.0.0/8")])
	count(ssh_open.deny) == 0 with input as sg([rule("tcp", 22, 22, "203.0.113.0/24")])
}

test_near_miss_source_group if {
	r := object.union(rule("tcp", 22, 22, ""), {"source_group": "sg-0aa1bb2cc3dd4ee5f"})
	count(ssh_open.deny) == 0 with input as sg([r])
}

test_near_miss_icmp if {
	count(ssh_open.deny) == 0 with input as sg([rule("icmp", -1, -1, "0.0.0.0/0")])
}

test_near_miss_egress_only if {
	# sg() puts an all-traffic rule to 0.0.0.0/0 in egress; outbound SSH is not exposure.
	count(ssh_open.deny) == 0 with input as sg([])
}

test_protocol_given_as_a_number_or_in_capitals if {
	count(ssh_open.deny) == 1 with input as sg([rule("6", 22, 22, "0.0.0.0/0")])
	count(ssh_open.deny) == 1 with input as sg([rule("TCP", 20, 30, "::/0")])
	count(ssh_open.deny) == 1 with input as sg([object.remove(rule("tcp", 22, 22, "0.0.0.0/0"), ["from_port", "to_port"])])
	count(ssh_open.deny) == 0 with input as sg([rule("50", -1, -1, "0.0.0.0/0")])
}
