# METADATA
# title: Security group opens a database or cache port to the internet
# description: Databases and caches reachable from 0.0.0.0/0 or ::/0 are found by scanners within minutes and are a common source of data breaches and ransom wipes; let only the application tier reach them.
# custom:
#   id: WARDEN-AWS-NET-004
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium}
package warden.aws.net.database_port_open

import data.warden.lib.config
import data.warden.lib.net

database_ports := config.setting("database_ports", net.default_database_ports)

deny contains violation if {
	some rule in input.resource.attributes.ingress
	net.open_to_internet(rule)
	exposed := sort(net.covered_ports(rule, database_ports))
	count(exposed) > 0
	violation := {
		"msg": sprintf(
			"security group %s (%s) allows %s from %s, which opens database and cache ports to the internet (%s)",
			[input.resource.name, input.resource.attributes.group_id, net.describe(rule), rule.cidr, concat(", ", [sprintf("%v", [p]) | some p in exposed])],
		),
		"key": rule.id,
		"target": rule.id,
		"ports": exposed,
	}
}
