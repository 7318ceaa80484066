# METADATA
# title: Security group was created by the EC2 launch wizard
# description: The launch wizard creates launch-wizard-N groups that open SSH or RDP to 0.0.0.0/0 by default and are then reused without review; replace them with deliberate groups. No automated fix is safe since instances depend on the group and deleting it would detach them from their rules.
# custom:
#   id: WARDEN-AWS-NET-023
#   severity: low
#   resource_types: [aws.ec2.security_group]
#   frameworks: {nist-800-53-r5: ["CM-2", "CM-7"], pci-dss-4.0: ["1.2.1"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: notify, risk: none}
#   prowler: [ec2_securitygroup_from_launch_wizard]
package warden.aws.net.launch_wizard_group

import data.warden.lib.net

deny contains {"msg": sprintf("%s was created by the EC2 launch wizard (%s)", [net.security_group_label, name])} if {
	name := input.resource.attributes.group_name
	is_string(name)
	regex.match(`^launch-wizard-[0-9]+$`, name)
}
