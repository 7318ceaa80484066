# METADATA
# title: Network helpers
# description: Ports, protocols and address ranges of AWS security-group rules and GCP firewall rules, and which ranges are the internet (public and wide).
package warden.lib.net

import data.warden.lib.display

# A port-carrying rule is one of two shapes:
# - an AWS security-group rule: {"protocol", "from_port", "to_port", "cidr", ...};
# - an entry of a GCP firewall's `allowed` (or `denied`): {"protocol", "ports"}.

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

# --- address ranges ------------------------------------------------------------
#
# "Open to the internet" means open to a range that is public and wide: it holds addresses
# outside the special-purpose ranges (IANA's IPv4 and IPv6 special-purpose registries,
# multicast and reserved space), and its prefix is at most internet_max_prefix_v4 (IPv4)
# or internet_max_prefix_v6 (IPv6). 0.0.0.0/1 is half of IPv4 and as open as 0.0.0.0/0;
# a single public host (/32, /128) or a customer allocation narrower than the settings is
# a deliberate peer, not the internet. A range that cannot be read is judged open: a typo
# must not make a violation vanish.

# internet_max_prefix_v4: a public IPv4 range of this prefix length or shorter (a /24,
# 256 addresses, or larger) counts as the internet.
internet_max_prefix_v4 := n if {
	n := data.warden.config.internet_max_prefix_v4
} else := 24

# internet_max_prefix_v6: a public IPv6 range of this prefix length or shorter counts as the
# internet. A /48 is the usual allocation of a whole site; a /56 or /64 is one customer's.
internet_max_prefix_v6 := n if {
	n := data.warden.config.internet_max_prefix_v6
} else := 48

# special_ranges are the ranges whose addresses are not reachable from the internet,
# written as the fewest CIDRs (net.cidr_merge of them is themselves), so that a range
# holds no public address exactly when one of them contains it.
special_ranges := {
	# IPv4 (RFC 6890 and the IANA IPv4 special-purpose registry)
	"0.0.0.0/8", # "this network"
	"10.0.0.0/8", # RFC 1918
	"100.64.0.0/10", # RFC 6598 shared address space (carrier-grade NAT)
	"127.0.0.0/8", # loopback
	"169.254.0.0/16", # link-local
	"172.16.0.0/12", # RFC 1918
	"192.0.0.0/24", # IETF protocol assignments
	"192.0.2.0/24", # documentation (TEST-NET-1)
	"192.168.0.0/16", # RFC 1918
	"198.18.0.0/15", # benchmarking
	"198.51.100.0/24", # documentation (TEST-NET-2)
	"203.0.113.0/24", # documentation (TEST-NET-3)
	"224.0.0.0/3", # multicast 224.0.0.0/4 and reserved 240.0.0.0/4 (broadcast included)
	# IPv6 (the IANA IPv6 special-purpose registry). IPv4-mapped ranges (::ffff:0:0/96)
	# are judged as the IPv4 ranges they map: the IPv4 entries above contain them.
	"::/127", # unspecified ::/128 and loopback ::1/128
	"64:ff9b:1::/48", # local-use IPv4/IPv6 translation
	"100::/64", # discard-only
	"2001:2::/48", # benchmarking
	"2001:db8::/32", # documentation
	"3fff::/20", # documentation (RFC 9637)
	"5f00::/16", # segment routing SIDs (RFC 9602)
	"fc00::/7", # unique local
	"fe80::/9", # link-local fe80::/10 and deprecated site-local fec0::/10
	"ff00::/8", # multicast
}

# is_internet(cidr) holds for a range (a CIDR, or a bare address read as a single host)
# that is public and wide, or that cannot be read (fail closed). It is the one decision
# every network policy uses; range_info describes the same judgement for messages and
# tests. It is true or false, never undefined, so that OPA computes it once per distinct
# range and query (a function's result is cached only when it is defined): the usual
# 0.0.0.0/0 and ::/0 without parsing, a narrow or special-purpose range with a parse and
# one builtin call.
is_internet(cidr) if {
	cidr in {"0.0.0.0/0", "::/0"}
} else := false if {
	c := as_cidr(cidr)
	net.cidr_is_valid(c)
	not public_and_wide(c)
} else := true

# public_and_wide(c) holds for a valid CIDR that is wide (a cheap test on its prefix,
# made first) and public.
public_and_wide(c) if {
	[family, prefix] := family_prefix(c)
	wide(family, prefix)
	not private_by_text(c, family, prefix)
	public(c)
}

# private_by_text(c, family, prefix) holds for a valid IPv4 CIDR inside 10.0.0.0/8 or
# 192.168.0.0/16 told by its text alone: most private ranges in a cloud are these, and a
# string test costs far less than matching against every special-purpose range. public
# decides every other range.
private_by_text(c, 4, prefix) if {
	startswith(c, "10.")
	prefix >= 8
}

private_by_text(c, 4, prefix) if {
	startswith(c, "192.168.")
	prefix >= 16
}

# wide(family, prefix) holds for a prefix length at most internet_max_prefix_v4 (IPv4) or
# internet_max_prefix_v6 (IPv6).
wide(4, prefix) if prefix <= internet_max_prefix_v4

wide(6, prefix) if prefix <= internet_max_prefix_v6

# public(c) holds for a valid CIDR that holds an address outside special_ranges.
public(c) if count(net.cidr_contains_matches(special_ranges, c)) == 0

# range_info(cidr) describes a range as is_internet judges it, for messages and tests:
#   "cidr":     the range as written;
#   "valid":    whether it reads as a range;
#   "family":   4 or 6 (an IPv4-mapped range, ::ffff:a.b.c.d/p, is the IPv4 range it maps);
#   "prefix":   its prefix length within its family;
#   "public":   whether it holds an address outside special_ranges;
#   "wide":     whether its prefix is at most internet_max_prefix_v4 or internet_max_prefix_v6;
#   "internet": whether is_internet(cidr) holds: public and wide, or not valid;
#   "size":     how wide it is: "every IPv4 address", "2147483648 addresses", "2^125 addresses".
# METADATA
# custom:
#   memo: true
range_info(cidr) := info if {
	c := as_cidr(cidr)
	net.cidr_is_valid(c)
	[family, prefix] := family_prefix(c)
	info := {
		"cidr": cidr,
		"valid": true,
		"family": family,
		"prefix": prefix,
		"public": count([1 | public(c)]) > 0,
		"wide": count([1 | wide(family, prefix)]) > 0,
		"internet": is_internet(cidr),
		"size": size_text(family, prefix),
	}
} else := {
	"cidr": cidr,
	"valid": false,
	"internet": true,
	"size": "not a valid address range, so judged open",
}

# as_cidr(x) is x when it has a prefix length, and else x as a single host (GCP accepts a
# bare address in source_ranges); undefined for anything but a string.
as_cidr(x) := x if {
	is_string(x)
	contains(x, "/")
} else := concat("", [x, "/128"]) if {
	is_string(x)
	contains(x, ":")
} else := concat("", [x, "/32"]) if {
	is_string(x)
}

# family_prefix(c) is [family, prefix length] of the valid CIDR c. net.cidr_contains reads
# an IPv4 range as inside ::ffff:0:0/96 too, so only a range written in IPv6 notation is
# taken for an IPv4-mapped one.
family_prefix(c) := [4, bits - 96] if {
	bits := to_number(split(c, "/")[1])
	contains(c, ":")
	bits >= 96
	net.cidr_contains("::ffff:0:0/96", c)
} else := [6, to_number(split(c, "/")[1])] if {
	contains(c, ":")
} else := [4, to_number(split(c, "/")[1])]

# size_text(family, prefix) says how many addresses a range holds, for messages.
size_text(4, 0) := "every IPv4 address"

size_text(6, 0) := "every IPv6 address"

size_text(4, prefix) := sprintf("%d addresses", [bits.lsh(1, 32 - prefix)]) if prefix > 0

size_text(6, prefix) := sprintf("2^%d addresses", [128 - prefix]) if prefix > 0

# cidr_text(cidr) names a range and how wide it is, for messages:
# "0.0.0.0/1 (2147483648 addresses)", "::/0 (every IPv6 address)".
cidr_text(cidr) := sprintf("%s (%s)", [cidr, range_info(cidr).size])

# has_cidr(rule) holds for an AWS security-group rule whose peer is a range: its cidr is
# set (a rule whose peer is a source group or prefix list has an empty cidr).
has_cidr(rule) if {
	cidr := rule.cidr
	not cidr in {"", null}
}

# open_to_internet(rule) holds for an AWS security-group rule whose peer is the internet.
open_to_internet(rule) if {
	has_cidr(rule)
	is_internet(rule.cidr)
}

# peer(rule) is the other side of an AWS security-group rule: its CIDR, or else its source
# group or prefix list, or else "an unknown peer" (a message never decides a violation).
peer(rule) := rule.cidr if {
	has_cidr(rule)
} else := display.field(rule, "source_group", "an unknown peer")

# --- GCP firewall sources --------------------------------------------------------

# gcp_trusted_source_ranges are source ranges of GCP firewall rules that are not the
# internet although they are public and wide: Google's own proxies and probes, which GCP
# routes to a network only on behalf of its project. Identity-Aware Proxy TCP forwarding
# (35.235.240.0/20) authenticates every connection; load-balancer health checks
# (35.191.0.0/16, 130.211.0.0/22) carry no user traffic. Set it to [] to judge them as any
# other range.
gcp_trusted_source_ranges := ranges if {
	ranges := data.warden.config.gcp_trusted_source_ranges
} else := ["35.235.240.0/20", "35.191.0.0/16", "130.211.0.0/22"]

# gcp_trusted(range) holds for a valid source range inside one of gcp_trusted_source_ranges.
gcp_trusted(range) if {
	not range in {"0.0.0.0/0", "::/0"}
	c := as_cidr(range)
	net.cidr_is_valid(c)
	count(net.cidr_contains_matches(gcp_trusted_source_ranges, c)) > 0
}

# internet_source(range) holds for a source range of a GCP firewall rule that admits the
# internet.
internet_source(range) if {
	is_internet(range)
	not gcp_trusted(range)
}

# internet_ranges(firewall) is the set of source ranges of a GCP firewall (its attributes)
# that admit the internet.
internet_ranges(firewall) := {r | some r in object.get(firewall, "source_ranges", []); internet_source(r)}

# firewall_open_to_internet(firewall) holds for the attributes of a GCP firewall rule that is
# enabled, applies to ingress and admits sources from the internet.
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
# security group or firewall do not admit the internet; these rules set those aside by their
# range (range_info, computed once per distinct range), and reason about protocols and ports
# only for the others.

# internet_ingress lists the ingress rules of the AWS security group being evaluated that
# admit the internet, each as an object:
#   "rule":      the rule;
#   "protocol":  protocol(rule);
#   "ranges":    port_ranges(rule), as a sorted array of [from, to];
#   "all_ports": whether all_ports(rule) holds (a range holds every port).
# A rule without a protocol admits nothing and is left out. The rule's range is judged by
# is_internet(cidr): open_to_internet(rule) spelled out, since a function of the whole rule
# would hash the rule on every call, while one of a string is computed once per range. The
# usual tcp and udp rules are read in place (a comparison used as a value is true or
# false); open_rule does the others.
internet_ingress := array.concat(
	[{
		"rule": rule,
		"protocol": rule.protocol,
		"ranges": [[rule.from_port, rule.to_port]],
		"all_ports": [rule.from_port <= 1, rule.to_port >= 65535] == [true, true],
	} |
		some rule in input.resource.attributes.ingress
		cidr := rule.cidr
		not cidr in {"", null}
		is_internet(cidr)
		rule.protocol in {"tcp", "udp"}
		is_number(rule.from_port)
		is_number(rule.to_port)
	],
	[open_rule(rule) |
		some rule in input.resource.attributes.ingress
		cidr := rule.cidr
		not cidr in {"", null}
		is_internet(cidr)
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
	sources := sort({r | some r in object.get(input.resource.attributes, "source_ranges", []); internet_source(r)})
	count(sources) > 0
}

# security_group_label names the AWS security group being evaluated in messages:
# "security group prod-web (sg-0a1b)", or without the parts it lacks.
security_group_label := sprintf("security group %s (%s)", [display.name, input.resource.attributes.group_id]) if {
	is_string(input.resource.attributes.group_id)
	input.resource.attributes.group_id != ""
	display.name != input.resource.attributes.group_id
} else := sprintf("security group %s", [display.name])

# firewall_label names the GCP firewall rule being evaluated in messages:
# "firewall rule allow-ssh on network default", or without the network when it is unknown.
firewall_label := sprintf("firewall rule %s on network %s", [display.name, input.resource.attributes.network]) if {
	is_string(input.resource.attributes.network)
	input.resource.attributes.network != ""
} else := sprintf("firewall rule %s", [display.name])

# firewall_internet_sources_text names firewall_internet_sources and how wide each is, for
# messages: "0.0.0.0/0 (every IPv4 address), 8.0.0.0/8 (16777216 addresses)".
firewall_internet_sources_text := concat(", ", [cidr_text(r) | some r in firewall_internet_sources])

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
# METADATA
# custom:
#   memo: true
ports_in_ranges(ranges, ports) := {p | some p in ports; in_ranges(ranges, p)}

# every_port_in(ranges) holds when a range holds every port (1-65535 or 0-65535), as all_ports.
every_port_in(ranges) if {
	some [from, to] in ranges
	from <= 1
	to >= 65535
}

# --- services on well-known ports -------------------------------------------------
#
# A service policy names a service and its ports; these rules find the rules of the
# resource being evaluated that open any of them to the internet and word the finding.

# ports_text(ports) lists ports for messages: "20, 21".
ports_text(ports) := concat(", ", [format_int(p, 10) | some p in sort(ports)])

# aws_service_exposures(ports) lists, for the AWS security group being evaluated, each
# element of internet_ingress whose ranges hold one of ports, as {"open", "ports"} (the
# sorted ports it exposes). A rule admitting every port is left out: it is one exposure,
# WARDEN-AWS-NET-003's finding, not one per service.
aws_service_exposures(ports) := [{"open": open, "ports": exposed} |
	some open in internet_ingress
	open.all_ports == false
	exposed := sort(ports_in_ranges(open.ranges, ports))
	count(exposed) > 0
]

# aws_service_violation(exposure, service) is the finding of an AWS rule that opens a
# service's ports (exposure from aws_service_exposures) to the internet, saying what the
# group exposes (security_group_exposure, net_use.rego).
aws_service_violation(exposure, service) := {
	"msg": sprintf(
		"%s allows %s from %s: %s (%s) is open to the internet%s",
		[security_group_label, describe(exposure.open.rule), cidr_text(exposure.open.rule.cidr), service, ports_text(exposure.ports), security_group_exposure],
	),
	"key": exposure.open.rule.id,
	"target": exposure.open.rule.id,
	"ports": exposure.ports,
}

# firewall_service_ports(ports) is the sorted list of ports that the GCP firewall rule
# being evaluated opens to the internet (empty when it is not open to the internet). An
# entry admitting every port is left out: it is WARDEN-GCP-NET-003's finding.
firewall_service_ports(ports) := sort({p |
	some open in firewall_internet_allowed
	open.all_ports == false
	some p in ports_in_ranges(open.ranges, ports)
})

# firewall_service_violation(ports, exposed, service) is the finding of a GCP firewall rule
# that opens the exposed ports of a service (firewall_service_ports(ports)) to the internet,
# saying what the rule exposes (firewall_exposure, net_use.rego).
firewall_service_violation(ports, exposed, service) := {
	"msg": sprintf(
		"%s allows %s from %s: %s (%s) is open to the internet%s",
		[
			firewall_label,
			concat(", ", [describe(open.entry) | some open in firewall_internet_allowed; open.all_ports == false; count(ports_in_ranges(open.ranges, ports)) > 0]),
			firewall_internet_sources_text,
			service,
			ports_text(exposed),
			firewall_exposure,
		],
	),
	"ports": exposed,
}

# Ports that a dedicated service policy reports (Telnet, FTP, SMB/NetBIOS, POP3/IMAP):
# the high-risk-ports policies leave them out so that one exposure is one finding.
dedicated_service_ports := {20, 21, 23, 110, 137, 138, 139, 143, 445}

# Prowler's high-risk TCP ports (setting `high_risk_ports`): SMTP 25, POP3 110, MS RPC 135,
# IMAP 143, SMB 445, and the usual development servers and admin consoles 3000, 4333,
# 5000, 5500, 8080, 8088.
default_high_risk_ports := [25, 110, 135, 143, 445, 3000, 4333, 5000, 5500, 8080, 8088]

high_risk_ports := ports if {
	ports := data.warden.config.high_risk_ports
} else := default_high_risk_ports

# public_ports (setting `public_ports`): the ports a service may open to the internet.
public_ports := ports if {
	ports := data.warden.config.public_ports
} else := [80, 443]

# named_service_ports are the ports that a policy of their own reports when open to the
# internet: SSH, RDP, the database ports, the high-risk ports and the services of
# WARDEN-AWS-NET-007..018 and WARDEN-GCP-NET-007..016. The public-ports policies leave them
# out, so that one exposure is one finding.
named_service_ports := ({22, 3389, 20, 21, 23, 110, 137, 138, 139, 143, 445, 9092, 7199, 8888, 9160, 5601, 2483, 2484, 1434, 2375, 2376, 6443, 10250, 5900, 5901, 5902, 5903, 6000} | {p | some p in database_ports}) | {p | some p in high_risk_ports}

database_ports := ports if {
	ports := data.warden.config.database_ports
} else := default_database_ports

# non_public_ranges(ranges) is the part of the inclusive [from, to] port ranges outside
# public_ports and named_service_ports, as sorted [from, to] ranges; empty when every port
# is a public one or has a policy of its own.
non_public_ranges(ranges) := ranges_without(ranges, {p | some p in public_ports} | named_service_ports)

# ranges_without(ranges, ports) is the part of the inclusive [from, to] port ranges outside
# the set ports, as sorted [from, to] ranges.
# METADATA
# custom:
#   memo: true
ranges_without(ranges, ports) := sort({r |
	some [from, to] in ranges
	cuts := sort({p | some p in ports; from <= p; p <= to})
	bounds := array.concat(array.concat([from - 1], cuts), [to + 1])
	some i in numbers.range(0, count(bounds) - 2)
	r := [bounds[i] + 1, bounds[i + 1] - 1]
	r[0] <= r[1]
})
