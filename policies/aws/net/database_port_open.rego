# METADATA
# title: Security group opens a database or cache port to the internet
# description: Databases and caches reachable from the internet (any public range of /24 or wider, /48 for IPv6) are found by scanners within minutes and are a common source of data breaches and ransom wipes; let only the application tier reach them.
# custom:
#   id: WARDEN-AWS-NET-004
#   severity: high
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["SC-7"], pci-dss-4.0: ["1.3.1", "1.4.2", "1.4.4"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: aws.ec2.revoke_ingress, risk: medium, params: [target]}
#   prowler: [ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_mysql_3306, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_postgres_5432, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_redis_6379, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_memcached_11211, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_mongodb_27017_27018, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_sql_server_1433_1434, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_oracle_1521_2483, ec2_securitygroup_allow_ingress_from_internet_to_tcp_port_elasticsearch_kibana_9200_9300_5601]
package warden.aws.net.database_port_open

import data.warden.lib.net

# Read only when a rule is open to the internet.
database_ports := ports if {
	ports := data.warden.config.database_ports
} else := net.default_database_ports

# net.internet_ingress (the rules open to the internet, with their port ranges) is computed
# once per security group and shared by every policy of the type.

# A rule for one port: a lookup (the list of exposed ports is built for a violation only).
deny contains violation(open, exposed) if {
	some open in net.internet_ingress
	[[port, port]] = open.ranges
	port in database_ports
	exposed := sort({p | some p in database_ports; port <= p; p <= port})
}

# Any other rule: the database ports within its ranges.
deny contains violation(open, exposed) if {
	some open in net.internet_ingress
	[count(open.ranges), open.ranges[0][0]] != [1, open.ranges[0][1]]
	exposed := sort({p | some [from, to] in open.ranges; some p in database_ports; from <= p; p <= to})
	count(exposed) > 0
}

violation(open, exposed) := {
	"msg": sprintf(
		"%s allows %s from %s, which opens database and cache ports to the internet (%s)%s",
		[net.security_group_label, net.describe(open.rule), net.cidr_text(open.rule.cidr), concat(", ", [sprintf("%v", [p]) | some p in exposed]), net.security_group_exposure],
	),
	"key": open.rule.id,
	"target": open.rule.id,
	"ports": exposed,
}
