package warden.lib.net_test

import data.warden.lib.net

aws_rule(protocol, from, to, cidr) := {
	"id": sprintf("arn:aws:ec2:eu-west-1:111111111111:security-group/sg-0a1b#ingress/%s/%d-%d/%s", [protocol, from, to, cidr]),
	"direction": "ingress",
	"protocol": protocol,
	"from_port": from,
	"to_port": to,
	"cidr": cidr,
	"source_group": "",
	"description": "",
}

# --- CIDRs -------------------------------------------------------------------

test_open_to_internet_ipv4 if {
	net.open_to_internet(aws_rule("tcp", 22, 22, "0.0.0.0/0"))
}

test_open_to_internet_ipv6 if {
	net.open_to_internet(aws_rule("tcp", 22, 22, "::/0"))
}

# Ranges that are the internet: public and at least as wide as the default /24 (IPv4) or
# /48 (IPv6), whatever else they also hold.
internet_examples := [
	"0.0.0.0/0", "::/0",
	"0.0.0.0/1", "128.0.0.0/1", # the two halves of IPv4
	"8.0.0.0/8", "52.0.0.0/8", # public /8s
	"198.51.0.0/16", # holds TEST-NET-2, but is mostly public
	"35.235.240.0/20", # Google IAP: the internet for AWS (only GCP firewalls trust it)
	"1.2.3.0/24", # the default's edge
	"::/1", "2000::/3", "2600::/12", "2a00:1450::/32", "2a00:1450:4001::/48",
	"::ffff:0:0/96", # every IPv4 address, IPv4-mapped
	"::ffff:8.0.0.0/104", # 8.0.0.0/8, IPv4-mapped
]

# Ranges that are not: special-purpose, or narrower than the defaults.
not_internet_examples := [
	"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "192.168.10.0/24", # RFC 1918
	"100.64.0.0/10", # RFC 6598 carrier-grade NAT
	"127.0.0.0/8", "0.0.0.0/8", "169.254.0.0/16", "192.0.0.0/24",
	"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", # documentation
	"198.18.0.0/15", # benchmarking
	"224.0.0.0/4", "240.0.0.0/4", "224.0.0.0/3", # multicast, reserved and both
	"203.0.113.5/32", "8.8.8.8/32", "8.8.8.8", # one host
	"1.2.3.0/25", # public, but narrower than /24
	"::1/128", "::/128", "fe80::/10", "fc00::/7", "fd12:3456::/32", "2001:db8::/32",
	"3fff::/20", "ff00::/8", "64:ff9b:1::/48", "100::/64", "2001:2::/48",
	"2a00:1450:4001:800::/56", "2a00:1450:4001:800::/64", "2a00:1450:4001:800::200e", # narrower than /48
	"::ffff:10.0.0.0/104", # 10.0.0.0/8, IPv4-mapped
	"::ffff:8.8.8.0/125", # 8.8.8.0/29, IPv4-mapped: narrower than /24
]

test_internet_is_public_and_wide if {
	every cidr in internet_examples {
		net.is_internet(cidr)
		net.open_to_internet(aws_rule("tcp", 22, 22, cidr))
	}
}

test_not_internet_special_or_narrow if {
	every cidr in not_internet_examples {
		not net.is_internet(cidr)
		not net.open_to_internet(aws_rule("tcp", 22, 22, cidr))
	}
}

test_ipv4_mapped_range_is_judged_as_the_ipv4_range if {
	# ::ffff:8.8.8.0/120 is 8.8.8.0/24: public and as wide as the default.
	net.range_info("::ffff:8.8.8.0/120").family == 4
	net.range_info("::ffff:8.8.8.0/120").prefix == 24
	net.is_internet("::ffff:8.8.8.0/120")
	not net.is_internet("::ffff:8.8.8.0/125")
	not net.is_internet("::ffff:192.168.0.0/112")
}

test_invalid_range_is_judged_open if {
	# A range that cannot be read must not make a violation vanish.
	every cidr in ["0.0.0.0/33", "not-a-cidr", " 0.0.0.0/0", "0.0.0.0/0 ", "300.0.0.0/8", "::/129", "10.0.0.0/8/8", 0, true] {
		net.range_info(cidr).valid == false
		net.is_internet(cidr)
	}
	net.open_to_internet(aws_rule("tcp", 22, 22, "0.0.0.0/-1"))
	net.cidr_text("0.0.0.0/33") == "0.0.0.0/33 (not a valid address range, so judged open)"
}

test_range_info if {
	net.range_info("0.0.0.0/1") == {
		"cidr": "0.0.0.0/1", "valid": true, "family": 4, "prefix": 1,
		"public": true, "wide": true, "internet": true, "size": "2147483648 addresses",
	}
	net.range_info("10.0.0.0/8").public == false
	net.range_info("10.0.0.0/8").wide == true
	net.range_info("8.8.8.8/32").public == true
	net.range_info("8.8.8.8/32").wide == false
	net.range_info("8.8.8.8").prefix == 32
	net.range_info("2a00:1450::200e").prefix == 128
	net.range_info("2000::/3").family == 6
}

test_cidr_text_says_how_wide if {
	net.cidr_text("0.0.0.0/0") == "0.0.0.0/0 (every IPv4 address)"
	net.cidr_text("::/0") == "::/0 (every IPv6 address)"
	net.cidr_text("0.0.0.0/1") == "0.0.0.0/1 (2147483648 addresses)"
	net.cidr_text("8.0.0.0/8") == "8.0.0.0/8 (16777216 addresses)"
	net.cidr_text("1.2.3.0/24") == "1.2.3.0/24 (256 addresses)"
	net.cidr_text("2000::/3") == "2000::/3 (2^125 addresses)"
	net.cidr_text("::ffff:0:0/96") == "::ffff:0:0/96 (every IPv4 address)"
}

test_wide_prefix_settings if {
	# A stricter setting makes a /25 the internet; a looser one spares a /16.
	net.is_internet("1.2.3.0/25") with data.warden.config.internet_max_prefix_v4 as 28
	not net.is_internet("1.2.0.0/16") with data.warden.config.internet_max_prefix_v4 as 8
	net.is_internet("1.0.0.0/8") with data.warden.config.internet_max_prefix_v4 as 8
	net.is_internet("2a00:1450:4001:800::/56") with data.warden.config.internet_max_prefix_v6 as 64
	not net.is_internet("2a00:1450::/32") with data.warden.config.internet_max_prefix_v6 as 16

	# The settings never make a special-purpose range public.
	not net.is_internet("10.0.0.0/8") with data.warden.config.internet_max_prefix_v4 as 32
}

test_special_ranges_hold_no_public_address if {
	every special in net.special_ranges {
		net.range_info(special).public == false
	}
}

test_not_open_to_internet_source_group if {
	rule := object.union(aws_rule("tcp", 5432, 5432, ""), {"source_group": "sg-0fe1"})
	not net.open_to_internet(rule)
}

firewall := {
	"network": "default",
	"direction": "INGRESS",
	"disabled": false,
	"priority": 1000,
	"source_ranges": ["0.0.0.0/0"],
	"source_tags": [],
	"target_tags": [],
	"allowed": [{"protocol": "tcp", "ports": ["22"]}],
	"denied": [],
}

test_firewall_open_to_internet if {
	net.firewall_open_to_internet(firewall)
	net.firewall_open_to_internet(object.union(firewall, {"source_ranges": ["10.0.0.0/8", "::/0"]}))
}

test_firewall_internet_ranges if {
	net.internet_ranges(object.union(firewall, {"source_ranges": ["10.0.0.0/8", "::/0", "0.0.0.0/0"]})) == {"0.0.0.0/0", "::/0"}
	net.internet_ranges(object.union(firewall, {"source_ranges": ["10.0.0.0/8"]})) == set()
	net.internet_ranges(object.remove(firewall, ["source_ranges"])) == set()
}

test_firewall_not_open_when_egress_disabled_or_private if {
	not net.firewall_open_to_internet(object.union(firewall, {"direction": "EGRESS"}))
	not net.firewall_open_to_internet(object.union(firewall, {"disabled": true}))
	not net.firewall_open_to_internet(object.union(firewall, {"source_ranges": ["35.235.240.0/20"]}))
	not net.firewall_open_to_internet(object.union(firewall, {"source_ranges": [], "source_tags": ["bastion"]}))
}

test_firewall_open_to_any_public_wide_range if {
	every sources in [["0.0.0.0/1"], ["128.0.0.0/1", "10.0.0.0/8"], ["8.0.0.0/8"], ["::/1"], ["2000::/3"], ["not-a-cidr"]] {
		net.firewall_open_to_internet(object.union(firewall, {"source_ranges": sources}))
	}
	net.internet_ranges(object.union(firewall, {"source_ranges": ["0.0.0.0/1", "10.0.0.0/8", "128.0.0.0/1"]})) == {"0.0.0.0/1", "128.0.0.0/1"}
}

test_firewall_not_open_to_special_or_narrow_ranges if {
	every sources in [["10.0.0.0/8"], ["100.64.0.0/10"], ["192.0.2.0/24"], ["203.0.113.5/32"], ["203.0.113.5"], ["1.2.3.0/25"], ["fc00::/7"]] {
		not net.firewall_open_to_internet(object.union(firewall, {"source_ranges": sources}))
	}
}

test_firewall_google_ranges_are_trusted_unless_configured_otherwise if {
	google := object.union(firewall, {"source_ranges": ["35.235.240.0/20", "35.191.0.0/16", "130.211.0.0/22", "35.235.241.0/24"]})
	not net.firewall_open_to_internet(google)
	net.internet_ranges(google) == {"35.235.240.0/20", "35.191.0.0/16", "130.211.0.0/22", "35.235.241.0/24"} with data.warden.config.gcp_trusted_source_ranges as []

	# a range wider than a trusted one is not trusted
	net.firewall_open_to_internet(object.union(firewall, {"source_ranges": ["35.235.0.0/16"]}))
}

test_firewall_internet_sources_text if {
	fw := object.union(firewall, {"source_ranges": ["10.0.0.0/8", "8.0.0.0/8", "0.0.0.0/0"]})
	net.firewall_internet_sources_text == "0.0.0.0/0 (every IPv4 address), 8.0.0.0/8 (16777216 addresses)" with input as {"resource": {"attributes": fw}}
}

# --- protocols ---------------------------------------------------------------

test_protocol_names_and_numbers if {
	net.protocol({"protocol": "-1"}) == "all"
	net.protocol({"protocol": "all"}) == "all"
	net.protocol({"protocol": "TCP"}) == "tcp"
	net.protocol({"protocol": "6"}) == "tcp"
	net.protocol({"protocol": 17}) == "udp"
	net.protocol({"protocol": "58"}) == "icmpv6"
	net.protocol({"protocol": "esp"}) == "esp"
	net.protocol({"protocol": "50"}) == "50"
}

test_all_protocols if {
	net.all_protocols(aws_rule("-1", -1, -1, "0.0.0.0/0"))
	net.all_protocols({"protocol": "all"})
	not net.all_protocols(aws_rule("tcp", 0, 65535, "0.0.0.0/0"))
	not net.all_protocols({"protocol": "tcp"})
}

# --- AWS ports ---------------------------------------------------------------

test_covers_port_single if {
	net.covers_port(aws_rule("tcp", 22, 22, "0.0.0.0/0"), 22)
	not net.covers_port(aws_rule("tcp", 22, 22, "0.0.0.0/0"), 21)
	not net.covers_port(aws_rule("tcp", 22, 22, "0.0.0.0/0"), 23)
	not net.covers_port(aws_rule("tcp", 2222, 2222, "0.0.0.0/0"), 22)
}

test_covers_port_range_edges if {
	rule := aws_rule("tcp", 3300, 3400, "0.0.0.0/0")
	not net.covers_port(rule, 3299)
	net.covers_port(rule, 3300)
	net.covers_port(rule, 3389)
	net.covers_port(rule, 3400)
	not net.covers_port(rule, 3401)
}

test_covers_port_udp if {
	net.covers_port(aws_rule("udp", 3389, 3389, "0.0.0.0/0"), 3389)
}

test_covers_port_all_protocols if {
	rule := aws_rule("-1", -1, -1, "0.0.0.0/0")
	net.covers_port(rule, 0)
	net.covers_port(rule, 22)
	net.covers_port(rule, 65535)
}

test_icmp_covers_no_port if {
	# For icmp, from/to are the ICMP type and code, not ports.
	not net.covers_port(aws_rule("icmp", -1, -1, "0.0.0.0/0"), 22)
	not net.covers_port(aws_rule("icmp", 3, 4, "0.0.0.0/0"), 3)
	not net.covers_port(aws_rule("icmpv6", -1, -1, "::/0"), 22)
	not net.all_ports(aws_rule("icmp", -1, -1, "0.0.0.0/0"))
	net.port_ranges(aws_rule("icmp", -1, -1, "0.0.0.0/0")) == set()
}

test_other_protocol_covers_no_port if {
	not net.covers_port(aws_rule("50", -1, -1, "0.0.0.0/0"), 22)
}

test_covered_ports if {
	net.covered_ports(aws_rule("tcp", 3000, 5500, "0.0.0.0/0"), [22, 3306, 3389, 5432, 6379]) == {3306, 3389, 5432}
	net.covered_ports(aws_rule("tcp", 443, 443, "0.0.0.0/0"), [22, 3306]) == set()
}

test_all_ports if {
	net.all_ports(aws_rule("-1", -1, -1, "0.0.0.0/0"))
	net.all_ports(aws_rule("tcp", 0, 65535, "0.0.0.0/0"))
	net.all_ports(aws_rule("udp", 1, 65535, "0.0.0.0/0"))
	not net.all_ports(aws_rule("tcp", 2, 65535, "0.0.0.0/0"))
	not net.all_ports(aws_rule("tcp", 0, 65534, "0.0.0.0/0"))
}

test_all_traffic if {
	net.all_traffic(aws_rule("-1", -1, -1, "0.0.0.0/0"))
	net.all_traffic(aws_rule("tcp", 0, 65535, "0.0.0.0/0"))
	not net.all_traffic(aws_rule("tcp", 1024, 65535, "0.0.0.0/0"))
	not net.all_traffic(aws_rule("icmp", -1, -1, "0.0.0.0/0"))
}

test_range_size if {
	net.range_size([22, 22]) == 1
	net.range_size([8000, 8099]) == 100
	net.range_size([8000, 8100]) == 101
	net.range_size([0, 65535]) == 65536
}

test_port_ranges_aws if {
	net.port_ranges(aws_rule("tcp", 8000, 8099, "0.0.0.0/0")) == {[8000, 8099]}
	net.port_ranges(aws_rule("-1", -1, -1, "0.0.0.0/0")) == {[0, 65535]}
}

# --- GCP allowed entries -----------------------------------------------------

test_gcp_port_list if {
	entry := {"protocol": "tcp", "ports": ["22", "443"]}
	net.covers_port(entry, 22)
	net.covers_port(entry, 443)
	not net.covers_port(entry, 80)
	net.port_ranges(entry) == {[22, 22], [443, 443]}
}

test_gcp_port_range_edges if {
	entry := {"protocol": "tcp", "ports": ["8000-8080"]}
	not net.covers_port(entry, 7999)
	net.covers_port(entry, 8000)
	net.covers_port(entry, 8080)
	not net.covers_port(entry, 8081)
}

test_gcp_empty_ports_mean_every_port if {
	net.covers_port({"protocol": "tcp", "ports": []}, 22)
	net.covers_port({"protocol": "udp"}, 3389)
	net.all_ports({"protocol": "tcp"})
	not net.all_protocols({"protocol": "tcp"})
}

test_gcp_all_protocol if {
	entry := {"protocol": "all"}
	net.covers_port(entry, 22)
	net.all_protocols(entry)
	net.all_ports(entry)
}

test_gcp_full_range_is_all_ports if {
	net.all_ports({"protocol": "tcp", "ports": ["0-65535"]})
	net.all_ports({"protocol": "tcp", "ports": ["22", "1-65535"]})
	not net.all_ports({"protocol": "tcp", "ports": ["1-65534"]})
}

test_gcp_icmp_has_no_ports if {
	not net.covers_port({"protocol": "icmp"}, 22)
	not net.all_ports({"protocol": "icmp"})
	not net.all_traffic({"protocol": "icmp"})
}

test_gcp_numeric_protocol if {
	net.covers_port({"protocol": "6", "ports": ["22"]}, 22)
	net.covers_port({"protocol": "sctp", "ports": ["22"]}, 22)
	not net.covers_port({"protocol": "47"}, 22)
}

# --- messages ----------------------------------------------------------------

test_describe if {
	net.describe(aws_rule("-1", -1, -1, "0.0.0.0/0")) == "all traffic"
	net.describe(aws_rule("tcp", 22, 22, "0.0.0.0/0")) == "tcp 22"
	net.describe(aws_rule("udp", 60000, 61000, "0.0.0.0/0")) == "udp 60000-61000"
	net.describe(aws_rule("icmp", -1, -1, "0.0.0.0/0")) == "icmp"
	net.describe({"protocol": "tcp", "ports": ["8000-8080", "22", "443"]}) == "tcp 22,443,8000-8080"
	net.describe({"protocol": "udp"}) == "udp 0-65535"
	net.describe({"protocol": "all"}) == "all traffic"
}

test_peer if {
	net.peer(aws_rule("tcp", 22, 22, "::/0")) == "::/0"
	net.peer(object.union(aws_rule("-1", -1, -1, ""), {"source_group": "sg-0fe1"})) == "sg-0fe1"
}

test_default_database_ports_include_common_engines if {
	every port in [1433, 3306, 5432, 6379, 27017] {
		port in net.default_database_ports
	}
}

# --- the resource being evaluated: shared rules ------------------------------

# Rule shapes, usual and odd, each open to the internet, to check that the shared rules
# read them as protocol, port_ranges and all_ports do.
odd_rules := [
	aws_rule("tcp", 22, 22, "0.0.0.0/0"),
	aws_rule("udp", 0, 65535, "::/0"),
	aws_rule("tcp", 1, 65535, "0.0.0.0/0"),
	aws_rule("tcp", 2, 65535, "0.0.0.0/0"),
	aws_rule("-1", -1, -1, "0.0.0.0/0"),
	aws_rule("icmp", 8, 0, "0.0.0.0/0"),
	aws_rule("icmpv6", -1, -1, "::/0"),
	aws_rule("TCP", 3389, 3389, "0.0.0.0/0"),
	aws_rule("6", 22, 23, "0.0.0.0/0"),
	aws_rule("50", -1, -1, "0.0.0.0/0"),
	object.union(aws_rule("sctp", 22, 22, "0.0.0.0/0"), {"protocol": 132}),
	object.remove(aws_rule("tcp", 22, 22, "0.0.0.0/0"), ["to_port"]),
	object.remove(aws_rule("udp", 22, 22, "0.0.0.0/0"), ["from_port", "to_port"]),
	object.union(aws_rule("tcp", 22, 22, "0.0.0.0/0"), {"from_port": "22"}),
	object.remove(aws_rule("tcp", 22, 22, "0.0.0.0/0"), ["protocol"]),
]

expected(rule) := {
	"rule": rule,
	"protocol": net.protocol(rule),
	"ranges": sort(net.port_ranges(rule)),
	"all_ports": count({1 | net.all_ports(rule)}) == 1,
}

test_internet_ingress_reads_rules_as_the_functions_do if {
	rules := array.concat(odd_rules, [aws_rule("tcp", 22, 22, "10.0.0.0/8"), aws_rule("tcp", 22, 22, "")])
	got := net.internet_ingress with input as {"resource": {"attributes": {"ingress": rules}}}
	want := [expected(rule) | some rule in odd_rules; net.open_to_internet(rule); net.protocol(rule)]
	count(got) == count(want)
	{x | some x in got} == {x | some x in want}
}

test_internet_ingress_empty_without_ingress if {
	net.internet_ingress == [] with input as {"resource": {"attributes": {}}}
}

odd_entries := [
	{"protocol": "tcp", "ports": ["22"]},
	{"protocol": "tcp", "ports": ["22", "8000-8080", "22"]},
	{"protocol": "udp", "ports": ["0-65535"]},
	{"protocol": "udp", "ports": ["1-65535", "53"]},
	{"protocol": "tcp", "ports": []},
	{"protocol": "tcp"},
	{"protocol": "all"},
	{"protocol": "icmp"},
	{"protocol": "TCP", "ports": ["22"]},
	{"protocol": "6", "ports": ["3389"]},
	{"protocol": 17, "ports": ["53"]},
	{"protocol": "sctp", "ports": ["9"]},
	{"protocol": "tcp", "ports": ["-5"]},
	{"protocol": "tcp", "ports": ["1-2-3", "22"]},
	{"protocol": "tcp", "ports": [22]},
	{"protocol": "tcp", "ports": ["x"]},
	{"protocol": "tcp", "ports": ["1E3"]},
	{"protocol": "tcp", "from_port": 22, "to_port": 22, "ports": ["80"]},
]

test_firewall_internet_allowed_reads_entries_as_the_functions_do if {
	fw := object.union(firewall, {"source_ranges": ["10.0.0.0/8", "::/0", "0.0.0.0/0", "::/0"], "allowed": odd_entries})
	got := net.firewall_internet_allowed with input as {"resource": {"attributes": fw}}
	want := [object.union(object.remove(expected(entry), ["rule"]), {"entry": entry}) | some entry in odd_entries]
	got == want
	net.firewall_internet_sources == sort(net.internet_ranges(fw)) with input as {"resource": {"attributes": fw}}
}

test_firewall_internet_allowed_empty_when_not_open if {
	every fw in [
		object.union(firewall, {"direction": "EGRESS"}),
		object.union(firewall, {"disabled": true}),
		object.union(firewall, {"source_ranges": ["10.0.0.0/8"]}),
		object.remove(firewall, ["source_ranges"]),
	] {
		not net.firewall_open_to_internet(fw)
		not net.firewall_internet_sources with input as {"resource": {"attributes": fw}}
		net.firewall_internet_allowed == [] with input as {"resource": {"attributes": fw}}
	}
}

test_ranges_helpers if {
	net.in_ranges([[20, 23], [80, 80]], 22)
	not net.in_ranges([[20, 21], [80, 80]], 22)
	net.ports_in_ranges([[20, 23], [3300, 3310]], [22, 3306, 5432]) == {22, 3306}
	net.every_port_in([[1, 65535]])
	not net.every_port_in([[2, 65535]])
}
