# METADATA
# title: Firewall rule targets no instance
# description: An enabled ingress rule that allows traffic only to instances carrying its target tags or running as its target service accounts, when no instance of its project on its network does, is left over from something deleted or renamed, or mistyped; it clutters every review of the network and, the day an instance is given the tag or the account for another reason, admits whatever it allows. Rules without targets apply to the whole network and are not judged here (WARDEN-GCP-NET-017 judges those open to the internet). The rule is judged only when the project's instances were read whole, never when that read failed, nor in a Shared VPC host project, whose rules also apply to its service projects' instances. No automated fix, since deleting a rule cannot be undone and an instance template or managed instance group warden does not read may bring the tag back.
# custom:
#   id: WARDEN-GCP-NET-019
#   severity: low
#   resource_types: [gcp.compute.firewall]
#   frameworks: {nist-800-53-r5: ["CM-7"], soc2: ["CC6.6"], iso-27001-2022: ["A.8.20"]}
#   remediation: {action: notify, risk: none}
package warden.gcp.net.unused_rule

import data.warden.lib.net

# net.firewall_targets_none holds only when the instances were read whole: targets absent
# or known false decide nothing. direction == "INGRESS" lets OPA's rule index skip egress
# rules.
deny contains {"msg": msg, "key": "unused"} if {
	input.resource.attributes.direction == "INGRESS"
	attrs := input.resource.attributes
	not attrs.disabled == true
	count(object.get(attrs, "allowed", [])) > 0
	selectors := selector_text
	selectors != ""
	net.firewall_targets_none
	msg := sprintf("%s targets %s, which no instance of the project on the network has: the rule applies to nothing", [net.firewall_label, selectors])
}

# selector_text names what the rule selects instances by: "tags legacy-db, old-web",
# "service account a@p.iam.gserviceaccount.com", or both; empty for a rule without targets.
selector_text := concat(" and ", [part |
	some [field, one, many] in [["target_tags", "tag", "tags"], ["target_service_accounts", "service account", "service accounts"]]
	values := [v | some v in object.get(input.resource.attributes, field, []); is_string(v)]
	count(values) > 0
	part := sprintf("%s %s", [net.plural(count(values), one, many), concat(", ", values)])
])
