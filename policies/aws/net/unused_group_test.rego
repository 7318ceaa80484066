package warden.aws.net.unused_group_test

import data.warden.aws.net.unused_group

sg(name, attrs) := {"resource": {
	"uid": "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7",
	"type": "aws.ec2.security_group",
	"name": name,
	"account": "111111111111",
	"region": "eu-west-1",
	"scope": "aws/111111111111/ec2/eu-west-1",
	"tags": {},
	"attributes": object.union(
		{
			"group_id": "sg-0b7c1d2e3f4a5b6c7",
			"group_name": name,
			"vpc_id": "vpc-0c1d2e3f4a5b6c7d8",
			"description": name,
			"is_default": name == "default",
			"ingress": [],
			"egress": [],
		},
		attrs,
	),
}}

unused := {
	"attachments": {"complete": true, "error": "", "count": 0, "kinds": {}},
	"attached": false,
	"referenced_by": [],
}

test_unused_group if {
	unused_group.deny == {{
		"msg": "security group old-batch (sg-0b7c1d2e3f4a5b6c7) in vpc-0c1d2e3f4a5b6c7d8 is not used: no network interface uses it and no other security group's rules name it",
		"key": "unused",
	}} with input as sg("old-batch", unused)
}

# Near-misses, each one change away from the unused group.

test_near_miss_used_by_an_instance if {
	used := object.union(unused, {"attachments": {"count": 1, "kinds": {"ec2_instance": 1}}, "attached": true})
	count(unused_group.deny) == 0 with input as sg("old-batch", used)
}

# A detached interface still holds the group: AWS will not delete it.
test_near_miss_used_by_a_detached_interface if {
	used := object.union(unused, {"attachments": {"count": 1, "kinds": {"detached": 1}}, "attached": true})
	count(unused_group.deny) == 0 with input as sg("old-batch", used)
}

test_near_miss_named_by_another_group if {
	count(unused_group.deny) == 0 with input as sg("db-peers", object.union(unused, {"referenced_by": ["sg-0a0a0a0a0a0a0a0a0"]}))
}

test_near_miss_default_group if {
	count(unused_group.deny) == 0 with input as sg("default", unused)
}

# Fail closed: a read that failed, or was never made, is not "unused".
test_near_miss_interfaces_unread if {
	denied := object.union(unused, {"attachments": {"complete": false, "error": "ec2:DescribeNetworkInterfaces: AccessDenied"}})
	count(unused_group.deny) == 0 with input as sg("old-batch", object.remove(denied, ["attached"]))
	count(unused_group.deny) == 0 with input as sg("old-batch", object.remove(unused, ["attachments", "attached"]))
}

test_near_miss_groups_partly_read if {
	count(unused_group.deny) == 0 with input as sg("old-batch", object.remove(unused, ["referenced_by"]))
}
