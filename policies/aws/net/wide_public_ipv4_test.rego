package warden.aws.net.wide_public_ipv4_test

import data.warden.aws.net.wide_public_ipv4

sg_arn := "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7"

rule(direction, protocol, from, to, cidr) := {
	"id": sprintf("%s#%s/%s/%d-%d/%s", [sg_arn, direction, protocol, from, to, cidr]),
	"direction": direction,
	"protocol": protocol,
	"from_port": from,
	"to_port": to,
	"cidr": cidr,
	"source_group": "",
	"description": "",
}

ing(protocol, from, to, cidr) := rule("ingress", protocol, from, to, cidr)

egr(protocol, from, to, cidr) := rule("egress", protocol, from, to, cidr)

sg_with(attrs) := {"resource": {
	"uid": sg_arn,
	"type": "aws.ec2.security_group",
	"name": "prod-edge",
	"account": "111111111111",
	"region": "eu-west-1",
	"tags": {},
	"attributes": object.union(
		{
			"group_id": "sg-0b7c1d2e3f4a5b6c7",
			"group_name": "prod-edge",
			"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
			"is_default": false,
			"ingress": [],
			"egress": [egr("-1", -1, -1, "0.0.0.0/0")],
		},
		attrs,
	),
}}

sg(ingress) := sg_with({"ingress": ingress})

no_name(inp) := json.patch(inp, [{"op": "remove", "path": "/resource/name"}])

test_wide_ingress_and_egress if {
	a := ing("tcp", 443, 443, "52.0.0.0/8")
	b := egr("-1", -1, -1, "0.0.0.0/1")
	wide_public_ipv4.deny == {
		{
			"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) has an ingress rule allowing tcp 443 from 52.0.0.0/8 (16777216 addresses): a public IPv4 range wider than /24",
			"key": a.id,
		},
		{
			"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) has an egress rule allowing all traffic to 0.0.0.0/1 (2147483648 addresses): a public IPv4 range wider than /24",
			"key": b.id,
		},
	} with input as sg_with({"ingress": [a], "egress": [b]})
}

test_slash_23_without_name if {
	count(wide_public_ipv4.deny) == 1 with input as no_name(sg([ing("tcp", 443, 443, "8.8.8.0/23")]))
}

test_near_miss_slash_24_zero_private_and_ipv6 if {
	count(wide_public_ipv4.deny) == 0 with input as sg([ing("tcp", 443, 443, "8.8.8.0/24"), ing("tcp", 443, 443, "0.0.0.0/0"), ing("tcp", 443, 443, "10.0.0.0/8"), ing("tcp", 443, 443, "2a00::/16")])
}

test_ipv4_mapped_range_is_read_as_ipv4 if {
	count(wide_public_ipv4.deny) == 1 with input as sg([ing("tcp", 443, 443, "::ffff:52.0.0.0/104")])
	count(wide_public_ipv4.deny) == 0 with input as sg([ing("tcp", 443, 443, "::ffff:52.0.0.0/120")])
}
