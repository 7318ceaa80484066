package warden.lib.net_services_test

import data.warden.lib.net

test_ports_text if {
	net.ports_text({21, 20}) == "20, 21"
	net.ports_text([]) == ""
}

test_non_public_ranges if {
	net.non_public_ranges([[80, 80], [443, 443]]) == []
	net.non_public_ranges([[22, 22]]) == [] # SSH: WARDEN-*-NET-001's
	net.non_public_ranges([[8443, 8443]]) == [[8443, 8443]]
	net.non_public_ranges([[150, 444]]) == [[150, 442], [444, 444]]
	net.non_public_ranges([[80, 81]]) == [[81, 81]]
	net.non_public_ranges([[8000, 8100]]) == [[8000, 8079], [8081, 8087], [8089, 8100]]
	net.non_public_ranges([[8443, 8443]]) == [] with data.warden.config.public_ports as [8443]
}

test_high_risk_ports_setting if {
	net.high_risk_ports == [25, 110, 135, 143, 445, 3000, 4333, 5000, 5500, 8080, 8088]
	net.high_risk_ports == [1] with data.warden.config.high_risk_ports as [1]
}

test_aws_service_exposures if {
	rules := [
		{"id": "a", "protocol": "tcp", "from_port": 20, "to_port": 22, "cidr": "0.0.0.0/0"},
		{"id": "b", "protocol": "tcp", "from_port": 21, "to_port": 21, "cidr": "10.0.0.0/8"},
		{"id": "c", "protocol": "udp", "from_port": 23, "to_port": 23, "cidr": "::/0"},
	]
	exposures := net.aws_service_exposures({20, 21}) with input as {"resource": {"attributes": {"ingress": rules}}}
	[[e.open.rule.id, e.ports] | some e in exposures] == [["a", [20, 21]]]
}

test_firewall_service_ports if {
	fw := {"resource": {"name": "fw", "attributes": {
		"direction": "INGRESS", "disabled": false, "source_ranges": ["0.0.0.0/0"],
		"allowed": [{"protocol": "tcp", "ports": ["20-22"]}, {"protocol": "udp", "ports": ["21"]}],
	}}}
	net.firewall_service_ports({20, 21, 23}) == [20, 21] with input as fw
	net.firewall_service_ports({20, 21}) == [] with input as json.patch(fw, [{"op": "replace", "path": "/resource/attributes/source_ranges", "value": ["35.235.240.0/20"]}])
}
