# METADATA
# title: Default network exists
# description: The default network is an auto-mode network with a subnet in every region and comes with permissive rules (default-allow-ssh and default-allow-rdp from anywhere, default-allow-internal between every instance) that anyone may re-create; CIS wants it deleted and networks built deliberately, even once its default rules are gone. No automated fix is safe since deleting a network that instances use would cut them off.
# custom:
#   id: WARDEN-GCP-NET-005
#   severity: low
#   resource_types: [gcp.compute.network]
#   frameworks: {cis-gcp-2.0: ["3.1"], nist-800-53-r5: ["SC-7", "CM-7"], pci-dss-4.0: ["1.2.1"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20", "A.8.22"]}
#   remediation: {action: notify, risk: none}
#   prowler: [compute_network_default_in_use]
package warden.gcp.net.default_network

import data.warden.lib.display

# The network's name decides this policy: without a name, it is the last part of the uid
# (//compute.googleapis.com/projects/P/global/networks/NAME).
network_name := n if {
	n := input.resource.name
	is_string(n)
	n != ""
} else := n if {
	parts := split(display.uid, "/")
	n := parts[count(parts) - 1]
}

# default_rules are the default-allow rules still on the network.
default_rules := sort([name | some name in object.get(input.resource.attributes, "firewalls", []); startswith(name, "default-allow-")])

deny contains violation if {
	network_name == "default"
	count(default_rules) > 0
	violation := {
		"msg": sprintf(
			"project %s still has the default network with its default rules %s",
			[display.account, concat(", ", default_rules)],
		),
		"firewalls": default_rules,
	}
}

deny contains violation if {
	network_name == "default"
	count(default_rules) == 0
	violation := {
		"msg": sprintf("project %s still has the default network (its default rules are gone)", [display.account]),
		"firewalls": [],
	}
}
