# METADATA
# title: Legacy network
# description: A legacy network has one IPv4 range for every region and no subnetworks, so it cannot have per-subnet flow logs, private Google access or regional isolation; build a VPC network and move workloads to it. No automated fix is possible since a legacy network cannot be converted in place.
# custom:
#   id: WARDEN-GCP-NET-006
#   severity: medium
#   resource_types: [gcp.compute.network]
#   frameworks: {cis-gcp-2.0: ["3.2"], nist-800-53-r5: ["SC-7", "CM-2"], pci-dss-4.0: ["1.2.1"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20", "A.8.22"]}
#   remediation: {action: notify, risk: none}
#   prowler: [compute_network_not_legacy]
package warden.gcp.net.legacy_network

import data.warden.lib.display

# mode is absent when it was not read: no finding then.
deny contains {"msg": sprintf("network %s of project %s is a legacy network", [display.name, display.account])} if {
	input.resource.attributes.mode == "legacy"
}
