package warden.gcp.net.ssh_open_test

import data.warden.gcp.net.ssh_open

firewall(name, source_ranges, allowed) := {"resource": {
	"uid": sprintf("//compute.googleapis.com/projects/acme-data-1193/global/firewalls/%s", [name]),
	"type": "gcp.compute.firewall",
	"name": name,
	"account": "acme-data-1193",
	"region": "global",
	"scope": "gcp/acme-data-1193/compute",
	"tags": {},
	"attributes": {
		"network": "default",
		"direction": "INGRESS",
		"disabled": false,
		"priority": 65534,
		"source_ranges": source_ranges,
		"source_tags": [],
		"target_tags": [],
		"allowed": allowed,
		"denied": [],
	},
}}

with_attrs(fw, attrs) := json.patch(fw, [{"op": "add", "path": sprintf("/resource/attributes/%s", [k]), "value": v} | some k, v in attrs])

test_default_allow_ssh if {
	ssh_open.deny == {{"msg": "firewall rule default-allow-ssh on network default allows tcp 22 from 0.0.0.0/0 (every IPv4 address): SSH (22) is open to the internet"}} with input as firewall("default-allow-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["22"]}])
}

test_ipv6_source_and_several_entries if {
	ssh_open.deny == {{"msg": "firewall rule allow-admin on network default allows tcp 22,443, udp 0-65535 from ::/0 (every IPv6 address): SSH (22) is open to the internet"}} with input as firewall("allow-admin", ["::/0", "10.0.0.0/8"], [{"protocol": "tcp", "ports": ["22", "443"]}, {"protocol": "udp"}, {"protocol": "icmp"}])
}

test_port_range_and_all_protocols if {
	count(ssh_open.deny) == 1 with input as firewall("allow-low-ports", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["20-23"]}])
	count(ssh_open.deny) == 1 with input as firewall("allow-all", ["0.0.0.0/0"], [{"protocol": "all"}])
	count(ssh_open.deny) == 1 with input as firewall("allow-tcp", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": []}])
}

test_near_miss_iap_range if {
	count(ssh_open.deny) == 0 with input as firewall("allow-iap-ssh", ["35.235.240.0/20"], [{"protocol": "tcp", "ports": ["22"]}])
}

test_near_miss_other_port if {
	count(ssh_open.deny) == 0 with input as firewall("allow-alt-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["2222", "23-80"]}])
	count(ssh_open.deny) == 0 with input as firewall("default-allow-icmp", ["0.0.0.0/0"], [{"protocol": "icmp"}])
}

test_near_miss_disabled_or_egress if {
	fw := firewall("default-allow-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["22"]}])
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"disabled": true})
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"direction": "EGRESS"})
}

test_near_miss_deny_rule if {
	fw := firewall("deny-ssh", ["0.0.0.0/0"], [])
	count(ssh_open.deny) == 0 with input as with_attrs(fw, {"denied": [{"protocol": "tcp", "ports": ["22"]}]})
}

# --- which ranges are the internet (data.warden.lib.net.range_info) ------------

# Any public range at least as wide as a /24 (IPv4) or a /48 (IPv6) is the internet, not
# only 0.0.0.0/0 and ::/0; so is a range that cannot be read.
test_open_to_any_public_wide_range if {
	every sources in [["0.0.0.0/1"], ["0.0.0.0/1", "128.0.0.0/1"], ["8.0.0.0/8"], ["::/1"], ["2000::/3"], ["0.0.0.0/33"], ["10.0.0.0/8", "8.0.0.0/8"]] {
		count(ssh_open.deny) == 1 with input as firewall("allow-wide", sources, [{"protocol": "tcp", "ports": ["22"]}])
	}
}

test_message_says_how_wide_the_ranges_are if {
	ssh_open.deny == {{"msg": "firewall rule allow-wide on network default allows tcp 22 from 0.0.0.0/1 (2147483648 addresses), 128.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"}} with input as firewall("allow-wide", ["128.0.0.0/1", "10.0.0.0/8", "0.0.0.0/1"], [{"protocol": "tcp", "ports": ["22"]}])
}

test_near_miss_special_purpose_or_narrow_range if {
	every sources in [["10.0.0.0/8"], ["100.64.0.0/10"], ["192.0.2.0/24"], ["203.0.113.5/32"], ["203.0.113.5"], ["8.8.8.0/25"], ["fc00::/7"], ["10.0.0.0/8", "8.8.8.8/32"]] {
		count(ssh_open.deny) == 0 with input as firewall("allow-narrow", sources, [{"protocol": "tcp", "ports": ["22"]}])
	}
}

test_near_miss_google_proxies_and_probes if {
	every sources in [["35.235.240.0/20"], ["35.191.0.0/16", "130.211.0.0/22"]] {
		count(ssh_open.deny) == 0 with input as firewall("allow-google", sources, [{"protocol": "tcp", "ports": ["22"]}])
		count(ssh_open.deny) == 1 with input as firewall("allow-google", sources, [{"protocol": "tcp", "ports": ["22"]}])
			with data.warden.config.gcp_trusted_source_ranges as []
	}
}

# --- messages never decide a violation -------------------------------------------

test_firewall_without_name_or_network_still_violates if {
	fw := firewall("allow-wide", ["0.0.0.0/1"], [{"protocol": "tcp", "ports": ["22"]}])
	some v in ssh_open.deny with input as {"resource": object.remove(fw.resource, ["name"])}
	v.msg == "firewall rule //compute.googleapis.com/projects/acme-data-1193/global/firewalls/allow-wide on network default allows tcp 22 from 0.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"
	some w in ssh_open.deny with input as json.remove(fw, ["resource/name", "resource/attributes/network"])
	w.msg == "firewall rule //compute.googleapis.com/projects/acme-data-1193/global/firewalls/allow-wide allows tcp 22 from 0.0.0.0/1 (2147483648 addresses): SSH (22) is open to the internet"
}

# What the rule exposes ends the message: the instances it applies to, or, for a rule
# matching none, that it waits for the next one. The finding is the same either way.
test_message_says_what_is_exposed if {
	fw := firewall("allow-ssh", ["0.0.0.0/0"], [{"protocol": "tcp", "ports": ["22"]}])
	used := with_attrs(fw, {"targets": {"known": true, "instances": 3, "sample": ["a", "b", "c"]}})
	ssh_open.deny == {{"msg": "firewall rule allow-ssh on network default allows tcp 22 from 0.0.0.0/0 (every IPv4 address): SSH (22) is open to the internet; it exposes 3 instances: a, b, c"}} with input as used

	unused := with_attrs(fw, {"targets": {"known": true, "instances": 0, "sample": []}})
	[u] := [u | some u in ssh_open.deny] with input as unused
	endswith(u.msg, "SSH (22) is open to the internet; it matches no instance today, but any instance it comes to match is exposed at once")

	# unknown targets: reported all the same, with no claim about them
	unknown := with_attrs(fw, {"targets": {"known": false, "error": "compute.AggregatedListInstances: PermissionDenied: denied"}})
	[w] := [w | some w in ssh_open.deny] with input as unknown
	endswith(w.msg, "SSH (22) is open to the internet")
}
