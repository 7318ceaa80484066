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
		"msg": "security group prod-bastion (sg-0b7c1d2e3f4a5b6c7) allows tcp 22 from 0.0.0.0/0 (every IPv4 address): SSH (22) is open to the internet",
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

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every cidr in ["0.0.0.0/1", "128.0.0.0/1", "8.0.0.0/8", "::/1", "2000::/3", "0.0.0.0/33"] {
		count(ssh_open.deny) == 1 with input as sg([rule("tcp", 22, 22, cidr)])
	}
}

test_internet_split_in_halves_violates_once_per_half if {
	count(ssh_open.deny) == 2 with input as sg([rule("tcp", 22, 22, "0.0.0.0/1"), rule("tcp", 22, 22, "128.0.0.0/1")])
}

test_message_says_how_wide_the_range_is if {
	some v in ssh_open.deny with input as sg([rule("tcp", 22, 22, "0.0.0.0/1")])
	v.msg == "security group prod-bastion (sg-0b7c1d2e3f4a5b6c7) allows tcp 22 from 0.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"
}

test_near_miss_special_purpose_or_narrow_range if {
	every cidr in ["10.0.0.0/8", "100.64.0.0/10", "192.0.2.0/24", "203.0.113.5/32", "8.8.8.0/25", "fc00::/7", "2a00:1450:4001:800::/64"] {
		count(ssh_open.deny) == 0 with input as sg([rule("tcp", 22, 22, cidr)])
	}
}

test_wide_prefix_is_a_setting if {
	count(ssh_open.deny) == 1 with input as sg([rule("tcp", 22, 22, "8.8.8.0/25")])
		with data.warden.config.internet_max_prefix_v4 as 25
}

# --- messages never decide a violation -------------------------------------------

test_group_without_name_or_group_id_still_violates if {
	r := rule("tcp", 22, 22, "0.0.0.0/1")
	some v in ssh_open.deny with input as {"resource": object.remove(sg([r]).resource, ["name"])}
	v.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 (sg-0b7c1d2e3f4a5b6c7) allows tcp 22 from 0.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"
	no_ids := json.remove(sg([r]), ["resource/name", "resource/attributes/group_id"])
	some w in ssh_open.deny with input as no_ids
	w.msg == "security group arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0b7c1d2e3f4a5b6c7 allows tcp 22 from 0.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"
}

# What the group exposes ends the message: its instances and other users, or, for a group
# nothing uses, that the rule waits for the next attachment. The finding and its key are
# the same either way.
test_message_says_what_is_exposed if {
	r := rule("tcp", 22, 22, "0.0.0.0/0")
	used := object.union(sg([r]), {"resource": {"attributes": {"attached": true, "attachments": {"complete": true, "error": "", "count": 4, "kinds": {"ec2_instance": 3, "elb": 1}}}}})
	[v] := [v | some v in ssh_open.deny] with input as used
	v.msg == "security group prod-bastion (sg-0b7c1d2e3f4a5b6c7) allows tcp 22 from 0.0.0.0/0 (every IPv4 address): SSH (22) is open to the internet; it exposes 3 EC2 instances, 1 load balancer interface"
	v.key == r.id

	unused := object.union(sg([r]), {"resource": {"attributes": {"attached": false, "attachments": {"complete": true, "error": "", "count": 0, "kinds": {}}}}})
	[u] := [u | some u in ssh_open.deny] with input as unused
	endswith(u.msg, "SSH (22) is open to the internet; nothing uses the group today, but whatever is attached to it next is exposed at once")
	u.key == r.id

	# unknown use: reported all the same, with no claim about it
	unknown := object.union(sg([r]), {"resource": {"attributes": {"attachments": {"complete": false, "error": "ec2:DescribeNetworkInterfaces: AccessDenied"}}}})
	[w] := [w | some w in ssh_open.deny] with input as unknown
	endswith(w.msg, "SSH (22) is open to the internet")
}
