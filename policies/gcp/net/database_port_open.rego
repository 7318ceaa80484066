# METADATA
# title: Firewall rule opens a database or cache port to the internet
# description: Databases and caches reachable from the internet (any public range of /24 or wider, /48 for IPv6) are found by scanners within minutes and are a common source of data breaches and ransom wipes; let only the application tier reach them.
# custom:
#   id: WARDEN-GCP-NET-004
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.database_port_open

import data.warden.lib.net

# Read only when a firewall rule is open to the internet.
database_ports := ports if {
	ports := data.warden.config.database_ports
} else := net.default_database_ports

# net.firewall_internet_allowed (the allowed entries of a firewall rule open to the
# internet, with their port ranges) is computed once per firewall rule and shared by every
# policy of the type. direction == "INGRESS" lets OPA's rule index skip egress rules.
deny contains violation if {
	input.resource.attributes.direction == "INGRESS"
	allowed := net.firewall_internet_allowed
	exposed := sort({p | some open in allowed; some [from, to] in open.ranges; some p in database_ports; from <= p; p <= to})
	count(exposed) > 0
	exposing := [net.describe(open.entry) | some open in allowed; count(net.ports_in_ranges(open.ranges, database_ports)) > 0]
	violation := {
		"msg": sprintf(
			"%s allows %s from %s, which opens database and cache ports to the internet (%s)%s",
			[
				net.firewall_label,
				concat(", ", exposing),
				net.firewall_internet_sources_text,
				concat(", ", [sprintf("%v", [p]) | some p in exposed]),
				net.firewall_exposure,
			],
		),
		"ports": exposed,
	}
}
