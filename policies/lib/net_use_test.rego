package warden.lib.net_use_test

import data.warden.lib.net

group(attachments) := {"resource": {"uid": "sg", "attributes": {"group_id": "sg-1", "attachments": attachments}}}

test_exposure_names_what_uses_the_group if {
	att := {"complete": true, "error": "", "count": 5, "kinds": {"lambda": 1, "ec2_instance": 3, "elb": 1}}
	net.security_group_exposure == "; it exposes 3 EC2 instances, 1 load balancer interface, 1 Lambda interface" with input as group(att)
	net.group_in_use with input as group(att)
	not net.group_unattached with input as group(att)
}

test_exposure_singular_and_zero_kinds if {
	att := {"complete": true, "error": "", "count": 1, "kinds": {"ec2_instance": 1, "rds": 0}}
	net.security_group_exposure == "; it exposes 1 EC2 instance" with input as group(att)
}

# Interfaces counted but no kind named (a hand-written snapshot): the count alone.
test_exposure_without_kinds if {
	net.security_group_exposure == "; it exposes 2 network interfaces" with input as group({"complete": true, "count": 2, "kinds": {}})
}

test_exposure_of_an_unused_group if {
	att := {"complete": true, "error": "", "count": 0, "kinds": {}}
	net.security_group_exposure == "; nothing uses the group today, but whatever is attached to it next is exposed at once" with input as group(att)
	net.group_unattached with input as group(att)
}

# Near-misses: an incomplete read, or none at all, says nothing, and no group is unused.
test_unknown_use_says_nothing if {
	incomplete := {"complete": false, "error": "ec2:DescribeNetworkInterfaces: AccessDenied"}
	net.security_group_exposure == "" with input as group(incomplete)
	not net.group_unattached with input as group(incomplete)
	not net.group_in_use with input as group(incomplete)
	net.security_group_exposure == "" with input as {"resource": {"uid": "sg", "attributes": {"group_id": "sg-1"}}}
	not net.group_unattached with input as {"resource": {"uid": "sg", "attributes": {"group_id": "sg-1"}}}

	# complete as a string is not complete
	not net.group_unattached with input as group({"complete": "true", "count": 0, "kinds": {}})
}

firewall(targets) := {"resource": {"uid": "fw", "attributes": {"network": "prod", "targets": targets}}}

test_firewall_exposure_names_the_instances if {
	net.firewall_exposure == "; it exposes 3 instances: api, web-1, web-2" with input as firewall({"known": true, "instances": 3, "sample": ["api", "web-1", "web-2"]})
	net.firewall_exposure == "; it exposes 1 instance: bastion" with input as firewall({"known": true, "instances": 1, "sample": ["bastion"]})
	net.firewall_exposure == "; it exposes 7 instances: a, b, c, d, e and 2 more" with input as firewall({"known": true, "instances": 7, "sample": ["a", "b", "c", "d", "e"]})

	# a hand-written snapshot without a sample: the count alone
	net.firewall_exposure == "; it exposes 2 instances" with input as firewall({"known": true, "instances": 2})
	net.firewall_targets_some with input as firewall({"known": true, "instances": 2})
}

test_firewall_exposure_of_a_rule_matching_nothing if {
	t := {"known": true, "instances": 0, "sample": []}
	net.firewall_exposure == "; it matches no instance today, but any instance it comes to match is exposed at once" with input as firewall(t)
	net.firewall_targets_none with input as firewall(t)
	not net.firewall_targets_some with input as firewall(t)
}

# Near-misses: unknown targets, or none at all, say nothing, and no rule targets nothing.
test_firewall_unknown_targets_say_nothing if {
	unknown := {"known": false, "error": "compute.AggregatedListInstances: PermissionDenied: denied"}
	net.firewall_exposure == "" with input as firewall(unknown)
	not net.firewall_targets_none with input as firewall(unknown)
	net.firewall_exposure == "" with input as {"resource": {"uid": "fw", "attributes": {"network": "prod"}}}
	not net.firewall_targets_none with input as {"resource": {"uid": "fw", "attributes": {"network": "prod"}}}
	not net.firewall_targets_none with input as firewall({"known": "true", "instances": 0})
}
