package warden.aws.net.telnet_open_test

import data.warden.aws.net.telnet_open

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
	"name": "prod-edge",
	"account": "111111111111",
	"region": "eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-0b7c1d2e3f4a5b6c7",
		"group_name": "prod-edge",
		"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
		"is_default": false,
		"ingress": ingress,
		"egress": [rule("-1", -1, -1, "0.0.0.0/0")],
	},
}}

test_open_to_internet if {
	r := rule("tcp", 23, 23, "0.0.0.0/0")
	telnet_open.deny == {{
		"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) allows tcp 23 from 0.0.0.0/0 (every IPv4 address): Telnet (23) is open to the internet",
		"key": r.id,
		"target": r.id,
		"ports": [23],
	}} with input as sg([r])
}

test_ipv6_range_over_every_service_port if {
	some v in telnet_open.deny with input as sg([rule("tcp", 23, 23, "::/0")])
	v.ports == [23]
	startswith(v.msg, "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) allows tcp 23 from ::/0 (every IPv6 address): Telnet (")
}

test_near_miss_every_port_is_all_traffic_finding if {
	# one exposure, one finding: WARDEN-AWS-NET-003 reports it
	count(telnet_open.deny) == 0 with input as sg([rule("-1", -1, -1, "0.0.0.0/0"), rule("tcp", 0, 65535, "::/0")])
}

test_wide_public_range_without_name if {
	inp := json.patch(sg([rule("tcp", 23, 23, "8.0.0.0/24")]), [{"op": "remove", "path": "/resource/name"}])
	count(telnet_open.deny) == 1 with input as inp
}

test_near_miss_port_just_outside if {
	count(telnet_open.deny) == 0 with input as sg([rule("tcp", 24, 24, "0.0.0.0/0")])
}

test_near_miss_not_the_internet if {
	# a public /25 is narrower than internet_max_prefix_v4, 10.0.0.0/8 is private
	count(telnet_open.deny) == 0 with input as sg([rule("tcp", 23, 23, "8.8.8.0/25"), rule("tcp", 23, 23, "10.0.0.0/8")])
}

test_near_miss_peer_is_a_group if {
	r := object.union(rule("tcp", 23, 23, ""), {"source_group": "sg-0aaaaaaaaaaaaaaaa"})
	count(telnet_open.deny) == 0 with input as sg([r])
}

# A service policy's message says what the group exposes, as every open-rule policy's.
test_message_says_what_is_exposed if {
	used := object.union(sg([rule("tcp", 23, 23, "0.0.0.0/0")]), {"resource": {"attributes": {"attachments": {"complete": true, "error": "", "count": 2, "kinds": {"ec2_instance": 1, "detached": 1}}}}})
	[v] := [v | some v in telnet_open.deny] with input as used
	endswith(v.msg, "Telnet (23) is open to the internet; it exposes 1 EC2 instance, 1 detached interface")
}
