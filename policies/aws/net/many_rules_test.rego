package warden.aws.net.many_rules_test

import data.warden.aws.net.many_rules

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

rules(direction, n) := [rule(direction, "tcp", p, p, "10.0.0.0/8") | some p in numbers.range(1, n)]

test_too_many_ingress_rules if {
	many_rules.deny == {{"msg": "security group prod-edge (sg-0b7c1d2e3f4a5b6c7) has 51 ingress rules (at most 50)", "key": "ingress"}} with input as sg(rules("ingress", 51))
}

test_too_many_egress_rules_without_name if {
	count(many_rules.deny) == 1 with input as no_name(sg_with({"egress": rules("egress", 60)}))
}

test_near_miss_exactly_the_limit if {
	count(many_rules.deny) == 0 with input as sg_with({"ingress": rules("ingress", 50), "egress": rules("egress", 50)})
}

test_setting if {
	count(many_rules.deny) == 1 with input as sg(rules("ingress", 11))
		with data.warden.config.max_security_group_rules as 10
}
