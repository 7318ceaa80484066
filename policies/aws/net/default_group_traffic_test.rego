package warden.aws.net.default_group_traffic_test

import data.warden.aws.net.default_group_traffic

sg_arn := "arn:aws:ec2:eu-west-1:222222222222:security-group/sg-03e1f2a3b4c5d6e7f"

rule(direction, protocol, from, to, cidr, source_group) := {
	"id": sprintf("%s#%s/%s/%d-%d/%s", [sg_arn, direction, protocol, from, to, concat("", [cidr, source_group])]),
	"direction": direction,
	"protocol": protocol,
	"from_port": from,
	"to_port": to,
	"cidr": cidr,
	"source_group": source_group,
	"description": "",
}

# The rules AWS gives every new default group.
aws_default_ingress := rule("ingress", "-1", -1, -1, "", "sg-03e1f2a3b4c5d6e7f")

aws_default_egress := rule("egress", "-1", -1, -1, "0.0.0.0/0", "")

sg(is_default, ingress, egress) := {"resource": {
	"uid": sg_arn,
	"type": "aws.ec2.security_group",
	"name": "default",
	"account": "222222222222",
	"region": "eu-west-1",
	"scope": "aws/222222222222/ec2/eu-west-1",
	"tags": {},
	"attributes": {
		"group_id": "sg-03e1f2a3b4c5d6e7f",
		"group_name": "default",
		"vpc_id": "vpc-0e2f3a4b5c6d7e8f9",
		"description": "default VPC security group",
		"is_default": is_default,
		"ingress": ingress,
		"egress": egress,
	},
}}

test_aws_default_rules_one_violation_each if {
	default_group_traffic.deny == {
		{
			"msg": "default security group sg-03e1f2a3b4c5d6e7f of vpc-0e2f3a4b5c6d7e8f9 has an ingress rule allowing all traffic from sg-03e1f2a3b4c5d6e7f; default groups should allow no traffic",
			"key": aws_default_ingress.id,
			"target": aws_default_ingress.id,
		},
		{
			"msg": "default security group sg-03e1f2a3b4c5d6e7f of vpc-0e2f3a4b5c6d7e8f9 has an egress rule allowing all traffic to 0.0.0.0/0; default groups should allow no traffic",
			"key": aws_default_egress.id,
			"target": aws_default_egress.id,
		},
	} with input as sg(true, [aws_default_ingress], [aws_default_egress])
}

test_any_narrow_rule_fires if {
	r := rule("ingress", "tcp", 443, 443, "10.0.0.0/8", "")
	{v.key | some v in default_group_traffic.deny} == {r.id} with input as sg(true, [r], [])
}

test_egress_only_fires if {
	count(default_group_traffic.deny) == 1 with input as sg(true, [], [aws_default_egress])
}

test_default_group_without_rules if {
	count(default_group_traffic.deny) == 0 with input as sg(true, [], [])
}

test_near_miss_not_default if {
	count(default_group_traffic.deny) == 0 with input as sg(false, [aws_default_ingress], [aws_default_egress])
}

test_missing_rule_lists if {
	count(default_group_traffic.deny) == 0 with input as {"resource": {"attributes": {"group_id": "sg-1", "vpc_id": "vpc-1", "is_default": true}}}
}

test_group_without_name_group_id_vpc_or_source_group_still_violates if {
	r := object.remove(rule("ingress", "-1", -1, -1, "", "sg-03e1f2a3b4c5d6e7f"), ["source_group"])
	bare := json.remove(sg(true, [r], []), ["resource/name", "resource/attributes/group_id", "resource/attributes/vpc_id"])
	{v.msg | some v in default_group_traffic.deny} == {"default security group arn:aws:ec2:eu-west-1:222222222222:security-group/sg-03e1f2a3b4c5d6e7f of an unknown VPC has an ingress rule allowing all traffic from an unknown peer; default groups should allow no traffic"} with input as bare
}
