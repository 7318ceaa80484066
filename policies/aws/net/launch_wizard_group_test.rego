package warden.aws.net.launch_wizard_group_test

import data.warden.aws.net.launch_wizard_group

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

test_launch_wizard_group if {
	launch_wizard_group.deny == {{"msg": "security group launch-wizard-3 (sg-0b7c1d2e3f4a5b6c7) was created by the EC2 launch wizard (launch-wizard-3)"}} with input as json.patch(sg_with({"group_name": "launch-wizard-3"}), [{"op": "replace", "path": "/resource/name", "value": "launch-wizard-3"}])
}

test_without_name if {
	count(launch_wizard_group.deny) == 1 with input as no_name(sg_with({"group_name": "launch-wizard-12"}))
}

test_near_miss_similar_names if {
	count(launch_wizard_group.deny) == 0 with input as sg_with({"group_name": "launch-wizard"})
	count(launch_wizard_group.deny) == 0 with input as sg_with({"group_name": "prod-launch-wizard-1"})
	count(launch_wizard_group.deny) == 0 with input as sg_with({"group_name": "launch-wizard-1-copy"})
}
