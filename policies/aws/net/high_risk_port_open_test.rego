package warden.aws.net.high_risk_port_open_test

import data.warden.aws.net.high_risk_port_open

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

test_high_risk_ports_open if {
	r := ing("tcp", 8000, 8100, "0.0.0.0/0")
	high_risk_port_open.deny == {{
		"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) allows tcp 8000-8100 from 0.0.0.0/0 (every IPv4 address): a high-risk port (8080, 8088) is open to the internet",
		"key": r.id,
		"target": r.id,
		"ports": [8080, 8088],
	}} with input as sg([r])
}

test_smtp_without_name if {
	count(high_risk_port_open.deny) == 1 with input as no_name(sg([ing("tcp", 25, 25, "::/0")]))
}

test_setting_replaces_the_list if {
	count(high_risk_port_open.deny) == 0 with input as sg([ing("tcp", 25, 25, "0.0.0.0/0")])
		with data.warden.config.high_risk_ports as [9999]
	count(high_risk_port_open.deny) == 1 with input as sg([ing("tcp", 9999, 9999, "0.0.0.0/0")])
		with data.warden.config.high_risk_ports as [9999]
}

test_near_miss_dedicated_ports_and_neighbours if {
	# 445, 110 and 143 are SMB and POP3/IMAP's findings; 8081 is just outside
	count(high_risk_port_open.deny) == 0 with input as sg([ing("tcp", 445, 445, "0.0.0.0/0"), ing("tcp", 110, 110, "0.0.0.0/0"), ing("tcp", 8081, 8087, "0.0.0.0/0")])
}

test_near_miss_not_the_internet if {
	count(high_risk_port_open.deny) == 0 with input as sg([ing("tcp", 8080, 8080, "8.8.8.0/25"), ing("tcp", 8080, 8080, "172.16.0.0/12")])
}

test_near_miss_every_port_is_all_traffic_finding if {
	count(high_risk_port_open.deny) == 0 with input as sg([ing("-1", -1, -1, "0.0.0.0/0")])
}
