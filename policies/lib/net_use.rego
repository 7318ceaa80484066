package warden.lib.net

# --- what uses an AWS security group -------------------------------------------
#
# attributes.attachments (docs/resources.md) counts the network interfaces that use the
# security group being evaluated, by what they serve. Absent, or complete false (the
# interfaces could not be read), it says nothing: no rule below takes it for "unused".

# group_use_known holds when the group's interfaces were read whole.
group_use_known if input.resource.attributes.attachments.complete == true

# group_in_use holds when a network interface uses the group.
group_in_use if {
	group_use_known
	input.resource.attributes.attachments.count > 0
}

# group_unattached holds when the interfaces were read whole and none uses the group.
group_unattached if {
	group_use_known
	input.resource.attributes.attachments.count == 0
}

# interface_kinds names each kind of use, singular and plural, in the order messages give
# them: instances first, then what serves traffic from outside, then the rest.
interface_kinds := [
	["ec2_instance", "EC2 instance", "EC2 instances"],
	["elb", "load balancer interface", "load balancer interfaces"],
	["lambda", "Lambda interface", "Lambda interfaces"],
	["rds", "RDS interface", "RDS interfaces"],
	["elasticache", "ElastiCache interface", "ElastiCache interfaces"],
	["redshift", "Redshift interface", "Redshift interfaces"],
	["nat_gateway", "NAT gateway interface", "NAT gateway interfaces"],
	["vpc_endpoint", "VPC endpoint interface", "VPC endpoint interfaces"],
	["other", "other interface", "other interfaces"],
	["detached", "detached interface", "detached interfaces"],
]

# attachments_text says what uses the group: "3 EC2 instances, 1 load balancer interface";
# empty when nothing does or it is not known.
attachments_text := concat(", ", [sprintf("%d %s", [n, word]) |
	some [kind, one, many] in interface_kinds
	n := input.resource.attributes.attachments.kinds[kind]
	is_number(n)
	n > 0
	word := plural(n, one, many)
])

plural(1, one, _) := one

plural(n, _, many) := many if n != 1

# security_group_exposure ends the message of a finding on a rule the internet reaches
# with what the rule exposes: what uses the group today, or, for a group nothing uses,
# that the rule waits for the next thing attached to it. Empty when the use is unknown.
security_group_exposure := sprintf("; it exposes %s", [attachments_text]) if {
	group_in_use
	attachments_text != ""
} else := sprintf("; it exposes %d network interfaces", [input.resource.attributes.attachments.count]) if {
	group_in_use
} else := "; nothing uses the group today, but whatever is attached to it next is exposed at once" if {
	group_unattached
} else := ""

# --- what a GCP firewall rule applies to ----------------------------------------
#
# attributes.targets (docs/resources.md) counts the instances of its project that the GCP
# firewall rule being evaluated applies to, with a sample of their names. Absent, or
# known false (the instances could not be read), it says nothing: no rule below takes it
# for "targets nothing".

# firewall_targets_known holds when the project's instances were read whole.
firewall_targets_known if input.resource.attributes.targets.known == true

# firewall_targets_some holds when the rule applies to at least one instance.
firewall_targets_some if {
	firewall_targets_known
	input.resource.attributes.targets.instances > 0
}

# firewall_targets_none holds when the instances were read whole and the rule applies to
# none of them.
firewall_targets_none if {
	firewall_targets_known
	input.resource.attributes.targets.instances == 0
}

# firewall_targets_text names what the rule applies to: "1 instance: web-1", "3
# instances: a, b, c", "7 instances: a, b, c, d, e and 2 more".
firewall_targets_text := sprintf("%d %s: %s%s", [n, plural(n, "instance", "instances"), concat(", ", sample), more]) if {
	n := input.resource.attributes.targets.instances
	sample := [s | some s in object.get(input.resource.attributes.targets, "sample", []); is_string(s)]
	count(sample) > 0
	more := more_text(n - count(sample))
} else := sprintf("%d %s", [n, plural(n, "instance", "instances")]) if {
	n := input.resource.attributes.targets.instances
}

more_text(0) := ""

more_text(n) := sprintf(" and %d more", [n]) if n > 0

# firewall_exposure ends the message of a finding on a firewall rule the internet reaches
# with what the rule exposes: the instances it applies to today, or, for a rule that
# matches none, that it waits for the next instance it comes to match. Empty when the
# instances are unknown.
firewall_exposure := sprintf("; it exposes %s", [firewall_targets_text]) if {
	firewall_targets_some
} else := "; it matches no instance today, but any instance it comes to match is exposed at once" if {
	firewall_targets_none
} else := ""
