# METADATA
# title: Network helpers
# description: Ports, protocols and CIDRs of AWS security-group rules and GCP firewall rules.
package warden.lib.net

# A port-carrying rule is one of two shapes:
# - an AWS security-group rule: {"protocol", "from_port", "to_port", "cidr", ...};
# - an entry of a GCP firewall's `allowed` (or `denied`): {"protocol", "ports"}.

internet_cidrs := {"0.0.0.0/0", "::/0"}

# Protocol names and IANA numbers, normalised to one name; "all" means every protocol.
protocol_names := {
	"-1": "all",
	"all": "all",
	"1": "icmp",
	"6": "tcp",
	"17": "udp",
	"58": "icmpv6",
	"132": "sctp",
}

# Protocols whose rules carry port ranges; any other (icmp, esp, gre…) has no ports.
port_protocols := {"tcp", "udp", "sctp"}

every_port := [0, 65535]

# Database and cache ports (setting `database_ports`): MS SQL, Oracle, etcd, MySQL,
# PostgreSQL, CouchDB, Redis, Cassandra, ArangoDB, Elasticsearch, Memcached, MongoDB, DB2.
default_database_ports := [1433, 1521, 2379, 3306, 5432, 5984, 6379, 7000, 7001, 8529, 9042, 9200, 9300, 11211, 27017, 27018, 50000]

# is_internet(cidr) holds for a CIDR that admits every address: 0.0.0.0/0 or ::/0.
is_internet(cidr) if cidr in internet_cidrs

# open_to_internet(rule) holds for an AWS security-group rule whose peer is the internet.
open_to_internet(rule) if is_internet(rule.cidr)

# peer(rule) is the other side of an AWS security-group rule: its CIDR, or else its source
# group or prefix list.
peer(rule) := rule.cidr if {
	rule.cidr != ""
} else := rule.source_group

# internet_ranges(firewall) is the set of source ranges of a GCP firewall (its attributes)
# that admit every address.
internet_ranges(firewall) := {r | some r in object.get(firewall, "source_ranges", []); is_internet(r)}

# firewall_open_to_internet(firewall) holds for the attributes of a GCP firewall rule that is
# enabled, applies to ingress and admits sources from the whole internet.
firewall_open_to_internet(firewall) if {
	firewall.direction == "INGRESS"
	not firewall.disabled
	count(internet_ranges(firewall)) > 0
}

# protocol(rule) is the rule's protocol as a lower-case name ("all" for every protocol);
# AWS and GCP may give it as a name or an IANA number.
protocol(rule) := name if {
	name := protocol_names[text(rule.protocol)]
} else := text(rule.protocol)

text(x) := lower(x) if {
	is_string(x)
} else := lower(sprintf("%v", [x]))

# all_protocols(rule) holds when the rule admits every protocol (AWS -1, GCP "all").
all_protocols(rule) if protocol(rule) == "all"

# port_ranges(rule) is the set of inclusive [from, to] port ranges the rule admits:
# every port for all protocols or a GCP entry without ports, none for protocols without ports.
port_ranges(rule) := {every_port} if {
	all_protocols(rule)
} else := {[rule.from_port, rule.to_port]} if {
	protocol(rule) in port_protocols
	is_number(rule.from_port)
} else := {parse_port_range(p) | some p in rule.ports} if {
	protocol(rule) in port_protocols
	count(object.get(rule, "ports", [])) > 0
} else := {every_port} if {
	protocol(rule) in port_protocols
} else := set()

# parse_port_range(spec) reads a GCP port spec, "22" or "8000-8080", as [from, to].
parse_port_range(spec) := [to_number(from), to_number(to)] if {
	[from, to] := split(text(spec), "-")
} else := [port, port] if {
	port := to_number(spec)
}

# covers_port(rule, port) holds when the rule admits traffic to port on some protocol
# that has ports (tcp, udp, sctp), or on every protocol.
covers_port(rule, port) if {
	some [from, to] in port_ranges(rule)
	from <= port
	port <= to
}

# covered_ports(rule, ports) is the subset of ports the rule admits.
covered_ports(rule, ports) := {p | some p in ports; covers_port(rule, p)}

# range_size(range) is the number of ports in an inclusive [from, to] range.
range_size([from, to]) := (to - from) + 1

# all_ports(rule) holds when the rule admits every port of its protocol. Port 0 is reserved,
# so 1-65535 counts as every port, as does 0-65535.
all_ports(rule) if {
	some [from, to] in port_ranges(rule)
	from <= 1
	to >= 65535
}

# all_traffic(rule) holds when the rule admits every protocol or every port.
all_traffic(rule) if all_protocols(rule)

all_traffic(rule) if all_ports(rule)

# describe(rule) names what the rule admits, for messages: "all traffic", "tcp 22",
# "tcp 8000-8080", "tcp 22,443" (GCP) or "icmp".
describe(rule) := "all traffic" if {
	all_protocols(rule)
} else := concat(" ", [protocol(rule), concat(",", [range_text(r) | some r in sort(port_ranges(rule))])]) if {
	count(port_ranges(rule)) > 0
} else := protocol(rule)

range_text([from, to]) := format_int(from, 10) if from == to

range_text([from, to]) := sprintf("%d-%d", [from, to]) if from != to

# --- the resource being evaluated ----------------------------------------------
#
# The rules below have no arguments and read input.resource: OPA computes each once per
# resource, and every policy of the resource's type shares the result. Most rules of a
# security group or firewall do not admit the internet; these rules set those aside with
# one string comparison, and reason about protocols and ports only for the others.

# internet_ingress lists the ingress rules of the AWS security group being evaluated that
# admit the internet, each as an object:
#   "rule":      the rule;
#   "protocol":  protocol(rule);
#   "ranges":    port_ranges(rule), as a sorted array of [from, to];
#   "all_ports": whether all_ports(rule) holds (a range holds every port).
# A rule without a protocol admits nothing and is left out. The usual tcp and udp rules are
# read in place (a comparison used as a value is true or false); open_rule does the others.
internet_ingress := array.concat(
	[{
		"rule": rule,
		"protocol": rule.protocol,
		"ranges": [[rule.from_port, rule.to_port]],
		"all_ports": [rule.from_port <= 1, rule.to_port >= 65535] == [true, true],
	} |
		some rule in input.resource.attributes.ingress
		rule.cidr in {"0.0.0.0/0", "::/0"}
		rule.protocol in {"tcp", "udp"}
		is_number(rule.from_port)
		is_number(rule.to_port)
	],
	[open_rule(rule) |
		some rule in input.resource.attributes.ingress
		rule.cidr in {"0.0.0.0/0", "::/0"}
		[rule.protocol in {"tcp", "udp"}, is_number(object.get(rule, "from_port", null)), is_number(object.get(rule, "to_port", null))] != [true, true, true]
	],
)

# open_rule(rule) is the element of internet_ingress for rule, computed directly for the
# usual shapes of AWS rules.
open_rule(rule) := {
	"rule": rule,
	"protocol": rule.protocol,
	"ranges": [[rule.from_port, rule.to_port]],
	"all_ports": [rule.from_port <= 1, rule.to_port >= 65535] == [true, true],
} if {
	rule.protocol in {"tcp", "udp"}
	is_number(rule.from_port)
	is_number(rule.to_port)
} else := {"rule": rule, "protocol": "all", "ranges": [every_port], "all_ports": true} if {
	rule.protocol in {"-1", "all"}
} else := {"rule": rule, "protocol": rule.protocol, "ranges": [], "all_ports": false} if {
	rule.protocol in {"icmp", "icmpv6"}
} else := {
	"rule": rule,
	"protocol": protocol(rule),
	"ranges": sort(port_ranges(rule)),
	"all_ports": all_ports_value(rule),
}

all_ports_value(rule) if all_ports(rule)

default all_ports_value(_) := false

# firewall_internet_sources is the sorted list of the source ranges that admit the internet
# of the GCP firewall rule being evaluated, when it is enabled and applies to ingress
# (sort(internet_ranges(attributes)) when firewall_open_to_internet(attributes)); undefined
# when the rule is not open to the internet.
firewall_internet_sources := sources if {
	input.resource.attributes.direction == "INGRESS"
	not input.resource.attributes.disabled
	sources := sort({r | some r in object.get(input.resource.attributes, "source_ranges", []); r in {"0.0.0.0/0", "::/0"}})
	count(sources) > 0
}

# firewall_internet_allowed lists the allowed entries of the GCP firewall rule being
# evaluated when it is open to the internet (empty otherwise), in order, each as
# open_entry(entry): {"entry", "protocol", "ranges", "all_ports"} as in internet_ingress.
firewall_internet_allowed := [open_entry(entry) |
	firewall_internet_sources
	some entry in input.resource.attributes.allowed
]

# open_entry(entry) is the element of firewall_internet_allowed for an entry, computed
# directly for the usual entries: tcp or udp with a list of ports ("22", "8000-8080") that
# all read as numbers.
open_entry(entry) := {
	"entry": entry,
	"protocol": entry.protocol,
	"ranges": ranges,
	"all_ports": count([1 | some [from, to] in ranges; from <= 1; to >= 65535]) > 0,
} if {
	entry.protocol in {"tcp", "udp"}
	not entry.from_port
	parsed := [[to_number(parts[0]), to_number(parts[count(parts) - 1])] |
		some spec in entry.ports
		parts := split(spec, "-")
		count(parts) <= 2
	]
	count(parsed) > 0
	count(parsed) == count(entry.ports)
	ranges := sort({r | some r in parsed})
} else := {"entry": entry, "protocol": "all", "ranges": [every_port], "all_ports": true} if {
	entry.protocol == "all"
} else := {
	"entry": entry,
	"protocol": protocol(entry),
	"ranges": sort(port_ranges(entry)),
	"all_ports": all_ports_value(entry),
}

# in_ranges(ranges, port) holds when one of the inclusive [from, to] ranges holds port.
in_ranges(ranges, port) if {
	some [from, to] in ranges
	from <= port
	port <= to
}

# ports_in_ranges(ranges, ports) is the set of the ports that the ranges hold.
ports_in_ranges(ranges, ports) := {p | some p in ports; in_ranges(ranges, p)}

# every_port_in(ranges) holds when a range holds every port (1-65535 or 0-65535), as all_ports.
every_port_in(ranges) if {
	some [from, to] in ranges
	from <= 1
	to >= 65535
}
