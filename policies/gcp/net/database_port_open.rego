# METADATA
# title: Firewall rule opens a database or cache port to the internet
# description: Databases and caches reachable from 0.0.0.0/0 or ::/0 are found by scanners within minutes and are a common source of data breaches and ransom wipes; let only the application tier reach them.
# custom:
#   id: WARDEN-GCP-NET-004
#   severity: high
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: gcp.compute.disable_firewall, risk: medium}
package warden.gcp.net.database_port_open

import data.warden.lib.config
import data.warden.lib.net

database_ports := config.setting("database_ports", net.default_database_ports)

attrs := input.resource.attributes

deny contains violation if {
	net.firewall_open_to_internet(attrs)
	exposing := [entry | some entry in attrs.allowed; count(net.covered_ports(entry, database_ports)) > 0]
	count(exposing) > 0
	exposed := sort(union({net.covered_ports(entry, database_ports) | some entry in exposing}))
	violation := {
		"msg": sprintf(
			"firewall rule %s on network %s allows %s from %s, which opens database and cache ports to the internet (%s)",
			[
				input.resource.name, attrs.network,
				concat(", ", [net.describe(entry) | some entry in exposing]),
				concat(", ", sort(net.internet_ranges(attrs))),
				concat(", ", [sprintf("%v", [p]) | some p in exposed]),
			],
		),
		"ports": exposed,
	}
}
