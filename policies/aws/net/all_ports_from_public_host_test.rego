package warden.aws.net.all_ports_from_public_host_test

import data.warden.aws.net.all_ports_from_public_host

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

test_all_traffic_from_public_host if {
	r := ing("-1", -1, -1, "198.51.99.7/32")
	all_ports_from_public_host.deny == {{
		"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) allows all traffic from the public range 198.51.99.7/32 (1 addresses): every port is open to that address",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_every_tcp_port_from_public_v6_host_without_name if {
	count(all_ports_from_public_host.deny) == 1 with input as no_name(sg([ing("tcp", 0, 65535, "2a00:1450::1/128")]))
}

test_near_miss_some_ports if {
	count(all_ports_from_public_host.deny) == 0 with input as sg([ing("tcp", 2, 65535, "198.51.99.7/32")])
}

test_near_miss_private_internet_and_group if {
	# private peers are inside the network; the internet is WARDEN-AWS-NET-003's finding
	r := object.union(ing("-1", -1, -1, ""), {"source_group": "sg-0aaaaaaaaaaaaaaaa"})
	count(all_ports_from_public_host.deny) == 0 with input as sg([ing("-1", -1, -1, "10.1.2.3/32"), ing("-1", -1, -1, "0.0.0.0/0"), r])
}
