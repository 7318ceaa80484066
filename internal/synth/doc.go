// Package synth writes synthetic snapshots of any size with a realistic mix of resource
// types and about one resource in ten violating a policy, for benchmarks and load tests.
//
// # Mix
//
// Every mode draws the same types with the same weights: IAM roles 25%, security groups
// 15%, IAM policies 14%, access keys 12%, users 10%, GCP service accounts 6%, their keys
// 5%, firewalls 5%, ACM certificates 3%, IAM groups 2%, and 1% each of GCP project IAM
// policies, TLS endpoints and password policies. An AWS account or GCP project holds
// 2,000 consecutive resources. Each resource is drawn to violate a policy with
// Options.ViolationRate (0.1); such a resource gets a violating variant of its type.
//
// # Repetition
//
// Options.Repetition says how much content resources share, which is what an engine that
// reuses results across resources gains from.
//
// RepetitionDefault ("") is the original generator, kept byte for byte so that earlier
// measurements stay comparable. Its documents come from a handful of shapes (a few trust
// policies, a statement of 5 services × 97 buckets, two rule sets), so most repeat, more
// than in real organisations: on 20,000 resources every trust policy, role inline
// policy, rule set and firewall is shared with another resource, and 58% of policy
// documents; project bindings never are.
//
// RepetitionRealistic repeats content the way real AWS and GCP organisations do:
//
//	type                    what repeats
//	aws.iam.policy          60% of draws are AWS-managed (a catalog of 191 clean names, 4 violating:
//	                        AdministratorAccess, IAMFullAccess, PowerUserAccess, AWSCloudShellFullAccess),
//	                        uid arn:aws:iam::aws:policy/NAME with the same document, id and dates in
//	                        every account, each name at most once per account, attached to 1-3 of the
//	                        account's roles; 57% of policies at 2,000 resources an account. Of the
//	                        customer-managed ones, 70% are one of 20 module templates (same document,
//	                        name TEMPLATE-i), 30% have statements of their own.
//	aws.iam.role            trust policy: 90% from 10 templates (per mille: lambda 200, ecs-tasks 130,
//	                        ec2 190 without a source condition; with aws:SourceAccount lambda 80,
//	                        ecs-tasks 40, ec2 20; own account's root 90; the organisation's first
//	                        account 70; SAML 50; GitHub OIDC 30), 10% their own (aws:SourceArn of
//	                        the role, or an external id). Inline policy: 80% a module template.
//	                        Attached: ReadOnlyAccess, and half the time one more catalog policy.
//	aws.ec2.security_group  the first group of each VPC (2 a region, 4 regions an account) is its
//	                        default group, emptied as CIS asks; a third of the violating groups are
//	                        launch-wizard-N (SSH or RDP from anywhere); of the rest, 85% are one of
//	                        15 rule-set templates (web 80/443 from 0.0.0.0/0, PostgreSQL 5432 from
//	                        10.0.0.0/8, bastion 22 from a /32, ...), 15% a rule of their own.
//	aws.iam.group           inline policy: 85% a module template.
//	gcp.compute.firewall    each project's first four are its default network's (default-allow-ssh,
//	                        -rdp, -icmp, -internal: the same in every project, two of them findings
//	                        as in real projects); of the rest, 85% are one of 12 templates.
//	gcp.project.iam_policy  90% one of 6 binding sets.
//	other types             as in the default mode (their attributes repeat by nature).
//
// Measured with seed 1 (20,000 resources, 10 accounts / 200,000, 100 accounts), the share
// of contents that another resource has too, each with how many distinct ones there are:
// policy documents 87% (608 distinct of 2,738) / 87% (3,957 of 27,788); trust policies
// 91% (500 of 4,949) / 90% (5,365 of 49,746); role inline policies 81% / 80%; group
// inline policies 83% / 86%; security-group rule sets (rule ids left out, a group's
// reference to itself read as "self") 86% (495 of 2,941) / 87%; firewalls (allowed with
// source ranges) 86% / 87%; project bindings 92% / 90%.
//
// Violating variants are drawn as in the default mode (a statement granting too much, a
// stale or publicly trusted role, a port open to the internet, an editor from outside the
// domain), plus those of real organisations: the violating AWS-managed policies (30% of
// violating policies, while the account has them left), a default group keeping AWS's
// rules, launch-wizard groups. Clean draws keep the findings real organisations have
// everywhere: service trusts without a source condition (half the roles), each project's
// default-allow-ssh and -rdp.
//
// RepetitionNone makes, for the same seed, the same resources with the same names, shapes
// and violations as RepetitionRealistic, but no IAM document or statement, security-group
// rule or rule set, firewall (allowed with ranges) or binding set is shared by two
// resources of a type. The variations change no decision and no evaluation work: each
// IAM statement gets a Sid naming the resource, each security-group rule a description
// naming it, each firewall one more private /32 source range, each binding set one more
// service-account member on a viewer-like role. Atoms (an action name, "0.0.0.0/0", a
// principal) still recur, as they do in any organisation. Empty rule sets (emptied
// default groups) hold no rule to repeat and stay empty.
package synth
