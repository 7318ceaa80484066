package warden.aws.net.public_port_policy_open_test

import data.warden.aws.net.public_port_policy_open

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

test_non_public_ports_open if {
	# 8080 and 8088 are high-risk ports, WARDEN-AWS-NET-016's finding
	r := ing("tcp", 8000, 8100, "0.0.0.0/0")
	public_port_policy_open.deny == {{
		"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) allows tcp 8000-8100 from 0.0.0.0/0 (every IPv4 address): ports 8000-8079,8081-8087,8089-8100 are open to the internet but are not public ports (80, 443) and no other policy names them",
		"key": r.id,
		"target": r.id,
	}} with input as sg([r])
}

test_single_port_without_name if {
	count(public_port_policy_open.deny) == 1 with input as no_name(sg([ing("tcp", 8443, 8443, "::/0")]))
}

test_near_miss_public_ports if {
	count(public_port_policy_open.deny) == 0 with input as sg([ing("tcp", 80, 80, "0.0.0.0/0"), ing("tcp", 443, 443, "::/0"), ing("icmp", -1, -1, "0.0.0.0/0")])
}

test_setting_public_ports if {
	count(public_port_policy_open.deny) == 0 with input as sg([ing("tcp", 8443, 8443, "0.0.0.0/0")])
		with data.warden.config.public_ports as [443, 8443]
}

test_near_miss_all_ports_and_narrow_range if {
	# every port is WARDEN-AWS-NET-003's; a /25 is not the internet
	count(public_port_policy_open.deny) == 0 with input as sg([ing("-1", -1, -1, "0.0.0.0/0"), ing("tcp", 22, 22, "8.8.8.0/25")])
}
