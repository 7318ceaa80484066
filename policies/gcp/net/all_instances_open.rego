# METADATA
# title: Firewall rule opens every instance of a network to the internet
# description: An ingress rule admitting the internet (any public range of /24 or wider, /48 for IPv6, except Google's IAP and health-check ranges) with no target tags and no target service accounts applies to every instance of the network, today's and tomorrow's; scope it to the instances that serve the traffic. The rule is judged only when its target service accounts were read.
# custom:
#   id: WARDEN-GCP-NET-017
#   severity: medium
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7", "AC-4"], pci-dss-4.0: ["1.3.1", "1.4.2"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20", "A.8.22"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: high}
package warden.gcp.net.all_instances_open

import data.warden.lib.net

# target_service_accounts absent means not read: no finding then.
deny contains violation if {
	input.resource.attributes.direction == "INGRESS"
	attrs := input.resource.attributes
	count(object.get(attrs, "target_tags", [])) == 0
	attrs.target_service_accounts == []
	allowed := net.firewall_internet_allowed
	count(allowed) > 0
	violation := {"msg": sprintf(
		"%s allows %s from %s to every instance of the network (no target tags or service accounts)%s",
		[net.firewall_label, concat(", ", [net.describe(open.entry) | some open in allowed]), net.firewall_internet_sources_text, net.firewall_exposure],
	)}
}
