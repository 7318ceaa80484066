# METADATA
# title: Broad AWS-managed policy is barely used
# description: >-
#   A user, role or group has a broad AWS-managed policy attached (AdministratorAccess,
#   PowerUserAccess, or the full access of a service that controls identities, the
#   organization, compute or data, such as IAMFullAccess) and IAM's last-accessed data
#   shows it used only a small part of it within the window (setting
#   unused_access_window_days, 90 days): at most managed_policy_small_share_services (5)
#   of its services, and never all of them. Replace the policy with one granting
#   what is used. Only proven disuse counts: incomplete data, a principal younger than the
#   window, service-linked roles and principals tagged warden-least-privilege: exempt are
#   not judged. The fix, behind approval (high risk), creates a customer-managed policy
#   granting every action of each service used ("s3:*": AWS tracks only some actions, so
#   an untracked one of a used service must stay), attaches it, and only then detaches the
#   AWS-managed one; it refuses when the AWS-managed policy grants a used service only in
#   part (PowerUserAccess and IAM), as "svc:*" would then grant more than before.
#   Rollback attaches the AWS-managed policy again and removes the generated one. Not
#   judged from IAM Access Analyzer's findings, which do not say what is used.
# custom:
#   id: WARDEN-AWS-IAM-036
#   severity: high
#   resource_types: [aws.iam.user, aws.iam.role, aws.iam.group]
#   frameworks: {nist-800-53-r5: ["AC-6", "AC-6(7)"], pci-dss-4.0: ["7.2.2"], soc2: ["CC6.3"], iso-27001-2022: ["A.5.18", "A.8.2"]}
#   remediation: {action: aws.iam.replace_managed_attachment, risk: high, params: [policy, used_services, window_days]}
package warden.aws.iam.managed_policy_barely_used

import data.warden.lib.display
import data.warden.lib.usage

# small_share is the most services a broad policy's holder may use for the policy to count
# as barely used.
small_share := n if {
	n := data.warden.config.managed_policy_small_share_services
} else := 5

# broad_policies are the AWS-managed policies judged, by name (the part of the ARN after
# "policy/"), each with its services: "*" for every service (then every service in the
# usage data is the policy's), or the namespaces of the services it is for, leaving out
# what it grants on the side (IAMFullAccess reads Organizations, AmazonEC2FullAccess
# manages load balancers): a holder using IAM fully uses IAMFullAccess. The full access of
# one service is thus barely used when that service is unused: its share is all or nothing.
broad_policies := {
	"AdministratorAccess": "*",
	"PowerUserAccess": "*",
	"IAMFullAccess": ["iam"],
	"AWSOrganizationsFullAccess": ["organizations"],
	"AmazonEC2FullAccess": ["ec2"],
	"AmazonS3FullAccess": ["s3"],
	"AWSLambda_FullAccess": ["lambda"],
}

# attached are [name, arn] of the broad policies attached to the principal, read only
# when there is usage to judge them by (most principals have none: no regex for them).
attached contains [name, p.arn] if {
	usage.facts
	some p in object.get(input.resource.attributes, "attached_policies", [])
	is_string(p.arn)
	startswith(p.arn, "arn:aws")
	[_, name] := regex.find_all_string_submatch_n(`^arn:aws[a-z-]*:iam::aws:policy/(.+)$`, p.arn, 1)[0]
	broad_policies[name]
}

# granted(name) are the services of the usage data that policy name grants. Undefined when
# one of the services it lists is missing from the data, which then cannot speak for it.
granted(name) := {usage.service_name(s) | some s in services} if {
	services := usage.facts.services
	broad_policies[name] == "*"
} else := {svc | some svc in broad_policies[name]} if {
	services := usage.facts.services
	names := {usage.service_name(s) | some s in services}
	every svc in broad_policies[name] {
		svc in names
	}
}

deny contains violation if {
	some [name, arn] in attached

	# Read outside the comprehension: undefined (not judged) must stop the rule, where a
	# comprehension over it would be empty.
	used_services := usage.used_services
	services := granted(name)
	used := sort({svc | some svc in used_services; svc in services})
	count(used) <= small_share
	count(used) < count(services)
	violation := {
		"msg": sprintf(
			"%s %s has the AWS-managed policy %s attached but used %d of its %d %s within %d days%s; data as of %s",
			[
				usage.kind, display.name, name, count(used), count(services), plural(count(services), "service"),
				usage.window_days, used_list(used), usage.day(usage.facts.as_of),
			],
		),
		"key": name,
		"policy": arn,
		"used_services": used,
		"granted_services": count(services),
		"window_days": usage.window_days,
		"as_of": usage.facts.as_of,
	}
}

used_list(used) := "" if {
	count(used) == 0
} else := sprintf(": %s", [usage.listed(used)])

plural(1, word) := word

plural(n, word) := concat("", [word, "s"]) if n != 1
