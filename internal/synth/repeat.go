package synth

import (
	"fmt"
	"maps"
	"time"

	"github.com/warden-sec/warden/snapshot"
)

// The generators of the realistic and none modes. Both make the same random draws in the
// same order, so a seed gives the same resources, names, shapes and violations in both:
// the realistic mode fills them from the catalogs (catalog.go), the none mode makes each
// document and rule set unique with values that change no decision (vary, varyRule,
// varyRanges). The two snapshots then differ in repetition only, which is what a
// benchmark of a memoizing engine needs to compare.

// Shares of the realistic mode, documented in the package doc (doc.go).
const (
	managedShare        = 0.60 // policies drawn AWS-managed, while the account has catalog names left
	badManagedShare     = 0.30 // violating policies drawn from the violating AWS-managed ones
	customerTemplated   = 0.70 // customer-managed policies stamped from customerTemplates
	inlineTemplated     = 0.80 // role inline policies from customerTemplates
	groupTemplated      = 0.85 // group inline policies from customerTemplates
	sgTemplated         = 0.85 // security groups from sgTemplates
	firewallTemplated   = 0.85 // firewalls (after a project's default ones) from firewallTemplates
	projectTemplated    = 0.90 // project IAM policies from bindingTemplates
	vpcsPerRegion       = 2
	wizardShareOfBadSGs = 1.0 / 3
)

// trustTemplate is a kind of role trust policy and its share (per mille) of roles.
type trustTemplate struct {
	perMille int
	make     func(g *gen, i int) map[string]any
}

func serviceTrust(svc string) func(*gen, int) map[string]any {
	st := map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": svc}, "Action": "sts:AssumeRole"}
	d := doc(st)
	return func(*gen, int) map[string]any { return d }
}

// guardedTrust is a service trust with the aws:SourceAccount condition of the role's own
// account: the same document for every such role of an account.
func guardedTrust(svc string) func(*gen, int) map[string]any {
	return func(g *gen, i int) map[string]any {
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": svc}, "Action": "sts:AssumeRole",
			"Condition": map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": g.account(i)}}})
	}
}

// trustTemplates sum to 900 per mille: 90% of roles; the rest get a trust of their own.
// Service trusts without a source condition are a finding (confused deputy), as in real
// organisations, where they are the most common shape.
var trustTemplates = []trustTemplate{
	{200, serviceTrust("lambda.amazonaws.com")},
	{130, serviceTrust("ecs-tasks.amazonaws.com")},
	{190, serviceTrust("ec2.amazonaws.com")},
	{80, guardedTrust("lambda.amazonaws.com")},
	{40, guardedTrust("ecs-tasks.amazonaws.com")},
	{20, guardedTrust("ec2.amazonaws.com")},
	{90, func(g *gen, i int) map[string]any { // the account's own principals
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + g.account(i) + ":root"}, "Action": "sts:AssumeRole"})
	}},
	{70, func(*gen, int) map[string]any { return orgTrust }}, // the organisation's security account
	{50, func(g *gen, i int) map[string]any {
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Federated": "arn:aws:iam::" + g.account(i) + ":saml-provider/okta"},
			"Action": "sts:AssumeRoleWithSAML", "Condition": map[string]any{"StringEquals": map[string]any{"SAML:aud": "https://signin.aws.amazon.com/saml"}}})
	}},
	{30, func(g *gen, i int) map[string]any {
		return doc(map[string]any{"Effect": "Allow",
			"Principal": map[string]any{"Federated": "arn:aws:iam::" + g.account(i) + ":oidc-provider/token.actions.githubusercontent.com"},
			"Action":    "sts:AssumeRoleWithWebIdentity", "Condition": map[string]any{
				"StringEquals": map[string]any{"token.actions.githubusercontent.com:aud": "sts.amazonaws.com"},
				"StringLike":   map[string]any{"token.actions.githubusercontent.com:sub": "repo:example-org/*"}}})
	}},
}

var (
	orgTrust     = doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + acct(0) + ":root"}, "Action": "sts:AssumeRole"})
	publicTrust  = doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "*"}, "Action": "sts:AssumeRole"})
	unknownTrust = doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::999988887777:root"}, "Action": "sts:AssumeRole"})
)

// acctState is what the generator remembers of the current account and project: the
// AWS-managed policies already written (a snapshot holds each at most once per account),
// the VPCs that have their default group, the launch-wizard groups and the default
// firewalls written so far.
type acctState struct {
	account   string
	managed   []bool
	vpcs      map[string]bool
	wizards   int
	project   string
	firewalls int
}

func (g *gen) enter(i int) *acctState {
	s := &g.st
	if a := g.account(i); s.account != a {
		*s = acctState{account: a, managed: make([]bool, len(cleanManaged)+len(badManaged)), vpcs: map[string]bool{}, project: s.project, firewalls: s.firewalls}
	}
	if p := project(i); s.project != p {
		s.project, s.firewalls = p, 0
	}
	return s
}

// vary makes an IAM document unique to resource i in the none mode by giving each
// statement a Sid naming i: a Sid changes no decision and no evaluation work, so the two
// modes cost the same but for what a memo could reuse. In the realistic mode d is
// returned as it is (and may be shared with other resources).
func (g *gen) vary(d map[string]any, i int) map[string]any {
	if !g.unique {
		return d
	}
	list := d["Statement"].([]any)
	out := make([]any, len(list))
	for k, s := range list {
		c := maps.Clone(s.(map[string]any))
		sid, _ := c["Sid"].(string)
		c["Sid"] = fmt.Sprintf("%sR%dS%d", sid, i, k)
		out[k] = c
	}
	return map[string]any{"Version": d["Version"], "Statement": out}
}

// withStatement is d with one more statement, d itself left as it is.
func withStatement(d map[string]any, st map[string]any) map[string]any {
	list := d["Statement"].([]any)
	return map[string]any{"Version": d["Version"], "Statement": append(append([]any{}, list...), st)}
}

// pickManaged draws a catalog entry of the account not written yet (first free one from
// a random start), or -1 when all are. Entries are numbered clean first, then bad.
func (g *gen) pickManaged(s *acctState, bad bool) int {
	lo, n := 0, len(cleanManaged)
	if bad {
		lo, n = len(cleanManaged), len(badManaged)
	}
	start := g.r.IntN(n)
	for k := range n {
		idx := lo + (start+k)%n
		if !s.managed[idx] {
			s.managed[idx] = true
			return idx
		}
	}
	return -1
}

func managedAt(idx int) managedPolicy {
	if idx < len(cleanManaged) {
		return cleanManaged[idx]
	}
	return badManaged[idx-len(cleanManaged)]
}

// roleNames are n role names of the account of resource i, for attachments.
func (g *gen) roleNames(i, n int) []any {
	base := i / resourcesPerAccount * resourcesPerAccount
	out := make([]any, n)
	for k := range out {
		out[k] = fmt.Sprintf("app-%d-role", base+g.r.IntN(resourcesPerAccount))
	}
	return out
}

func (g *gen) policyR(i int, bad bool) snapshot.Resource {
	s := g.enter(i)
	a := g.account(i)
	draw := g.r.Float64()
	idx := -1
	if bad && draw < badManagedShare || !bad && draw < managedShare {
		idx = g.pickManaged(s, bad)
	}
	if idx >= 0 {
		m := managedAt(idx)
		roles := g.roleNames(i, 1+g.r.IntN(3))
		// AWS-managed policies carry the same id and dates in every account.
		return snapshot.Resource{UID: "arn:aws:iam::aws:policy/" + m.name, Type: "aws.iam.policy", Name: m.name,
			Account: a, Region: "global", Scope: "aws/" + a + "/iam", Attributes: map[string]any{
				"policy_id": fmt.Sprintf("ANPA%016X", 0xA000+idx), "path": "/", "aws_managed": true, "attachment_count": len(roles),
				"default_version_id": fmt.Sprintf("v%d", 1+idx%7), "created": g.fixedAgo(400 + idx), "updated": g.fixedAgo(30 + idx%90),
				"document":    g.vary(m.doc, i),
				"attached_to": map[string]any{"users": []any{}, "groups": []any{}, "roles": roles}}}
	}
	var d map[string]any
	name := fmt.Sprintf("app-%d-policy", i)
	if g.r.Float64() < customerTemplated {
		t := customerTemplates[g.r.IntN(len(customerTemplates))]
		d, name = t.doc, fmt.Sprintf("%s-%d", t.name, i)
	} else {
		d = doc(uniqueStatement(a, i, 0), uniqueStatement(a, i, 1+g.r.IntN(3)))
	}
	if bad {
		d = withStatement(d, g.badStatement())
	}
	return g.iam(i, "aws.iam.policy", "policy", name, map[string]any{
		"policy_id": fmt.Sprintf("ANPA%016X", i), "path": "/", "aws_managed": false, "attachment_count": 1 + g.r.IntN(3),
		"default_version_id": "v1", "created": g.ago(300), "updated": g.ago(30), "document": g.vary(d, i),
		"attached_to": map[string]any{"users": []any{}, "groups": []any{}, "roles": []any{fmt.Sprintf("app-%d-role", i)}},
	})
}

// fixedAgo is days before the snapshot, at midnight: the same in every account.
func (g *gen) fixedAgo(days int) string {
	return g.now.Truncate(24*time.Hour).AddDate(0, 0, -days).Format(time.RFC3339)
}

func (g *gen) trustR(i int, bad bool) map[string]any {
	if bad {
		if g.r.IntN(2) == 0 {
			return publicTrust
		}
		return unknownTrust
	}
	pick := g.r.IntN(1000)
	for _, t := range trustTemplates {
		if pick < t.perMille {
			return t.make(g, i)
		}
		pick -= t.perMille
	}
	// A trust of the role's own: a service limited to its own resource, or another
	// account of the organisation with an external id.
	if g.r.IntN(2) == 0 {
		svc := []string{"lambda", "states", "events"}[g.r.IntN(3)]
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": svc + ".amazonaws.com"}, "Action": "sts:AssumeRole",
			"Condition": map[string]any{"ArnLike": map[string]any{"aws:SourceArn": fmt.Sprintf("arn:aws:%s:us-east-1:%s:*:app-%d", svc, g.account(i), i)}}})
	}
	return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + acct(g.r.IntN(g.accounts)) + ":root"},
		"Action": "sts:AssumeRole", "Condition": map[string]any{"StringEquals": map[string]any{"sts:ExternalId": fmt.Sprintf("ext-%d", i)}}})
}

func (g *gen) roleR(i int, bad bool) snapshot.Resource {
	g.enter(i)
	name := fmt.Sprintf("app-%d-role", i)
	lastUsed := any(g.ago(g.r.IntN(30)))
	if bad && g.r.IntN(3) == 0 {
		lastUsed = g.ago(120 + g.r.IntN(300))
		bad = false
	}
	var inline map[string]any
	if bad && g.r.IntN(2) == 0 {
		inline = map[string]any{"name": "inline-admin", "document": g.vary(doc(g.badStatement()), i)}
		bad = false
	} else if g.r.Float64() < inlineTemplated {
		t := customerTemplates[g.r.IntN(len(customerTemplates))]
		inline = map[string]any{"name": t.name, "document": g.vary(t.doc, i)}
	} else {
		inline = map[string]any{"name": "data-access", "document": g.vary(doc(uniqueStatement(g.account(i), i, g.r.IntN(4))), i)}
	}
	attached := []any{map[string]any{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "name": "ReadOnlyAccess"}}
	if g.r.IntN(2) == 0 {
		m := cleanManaged[g.r.IntN(len(cleanManaged))]
		if m.name != "ReadOnlyAccess" {
			attached = append(attached, map[string]any{"arn": "arn:aws:iam::aws:policy/" + m.name, "name": m.name})
		}
	}
	return g.iam(i, "aws.iam.role", "role", name, map[string]any{
		"path": "/", "role_id": fmt.Sprintf("AROA%016X", i), "created": g.ago(200 + g.r.IntN(800)),
		"assume_role_policy": g.vary(g.trustR(i, bad), i), "last_used": lastUsed, "last_used_region": "us-east-1",
		"service_linked": false, "max_session_duration": 3600,
		"attached_policies": attached, "inline_policies": []any{inline},
	})
}

func (g *gen) groupR(i int, bad bool) snapshot.Resource {
	g.enter(i)
	name, d := "team-access", doc(uniqueStatement(g.account(i), i, g.r.IntN(4)))
	if bad {
		d = doc(g.badStatement())
	} else if g.r.Float64() < groupTemplated {
		t := customerTemplates[g.r.IntN(len(customerTemplates))]
		name, d = t.name, t.doc
	}
	return g.iam(i, "aws.iam.group", "group", fmt.Sprintf("team-%d", i), map[string]any{
		"path": "/", "created": g.ago(500), "members": []any{fmt.Sprintf("user-%d", i)},
		"attached_policies": []any{}, "inline_policies": []any{map[string]any{"name": name, "document": g.vary(d, i)}},
	})
}

// varyRule makes a rule's content unique to resource i in the none mode through its
// description, which no policy reads.
func (g *gen) varyRule(desc string, i int) string {
	if !g.unique {
		return desc
	}
	return fmt.Sprintf("%s (resource %d)", desc, i)
}

func (g *gen) sgRule(arn, dir string, r ruleSpec, i int) map[string]any {
	rule := g.rule(arn, dir, r.proto, r.from, r.to, r.cidr)
	rule["description"] = g.varyRule(r.desc, i)
	return rule
}

// egressAll is AWS's default egress rule: everything, anywhere.
var egressAll = ruleSpec{"-1", -1, -1, "0.0.0.0/0", ""}

func (g *gen) securityGroupR(i int, bad bool) snapshot.Resource {
	s := g.enter(i)
	a, ri := g.account(i), i%len(regions)
	region := regions[ri]
	vpc := fmt.Sprintf("vpc-%08x", ((i/resourcesPerAccount)*len(regions)+ri)*vpcsPerRegion+g.r.IntN(vpcsPerRegion))
	id := fmt.Sprintf("sg-%017x", i)
	arn := fmt.Sprintf("arn:aws:ec2:%s:%s:security-group/%s", region, a, id)
	name, desc, isDefault := "", "", false
	var ingress []any
	egress := []any{g.sgRule(arn, "egress", egressAll, i)}
	switch {
	case !s.vpcs[vpc]:
		// The VPC's default group, which AWS creates with the VPC. CIS wants it empty;
		// one drawn to violate keeps AWS's rules: all traffic from the group itself, and out.
		s.vpcs[vpc] = true
		name, desc, isDefault = "default", "default VPC security group", true
		if bad {
			self := g.rule(arn, "ingress", "-1", -1, -1, "")
			self["id"], self["source_group"] = fmt.Sprintf("%s#ingress/-1/-1--1/%s", arn, id), id
			self["description"] = g.varyRule("", i)
			ingress = []any{self}
		} else {
			egress = []any{}
		}
	case bad && g.r.Float64() < wizardShareOfBadSGs:
		s.wizards++
		name = fmt.Sprintf("launch-wizard-%d", s.wizards)
		desc = name + " created " + g.ago(100+g.r.IntN(600))
		port := []int{22, 22, 3389}[g.r.IntN(3)]
		ingress = []any{g.sgRule(arn, "ingress", ruleSpec{"tcp", port, port, "0.0.0.0/0", ""}, i)}
	default:
		if g.r.Float64() < sgTemplated || bad {
			t := sgTemplates[g.r.IntN(len(sgTemplates))]
			name, desc = fmt.Sprintf("%s-%d", t.name, i), t.desc
			for _, r := range t.ingress {
				ingress = append(ingress, g.sgRule(arn, "ingress", r, i))
			}
		} else {
			name, desc = fmt.Sprintf("svc-%d", i), "service "+fmt.Sprint(i)
			port := 1024 + i%50000
			ingress = []any{g.sgRule(arn, "ingress", ruleSpec{"tcp", port, port, fmt.Sprintf("10.%d.%d.%d/32", i>>16&255, i>>8&255, i&255), "from its client"}, i)}
		}
		if bad {
			port := []int{22, 3389, 3306, 6379}[g.r.IntN(4)]
			ingress = append(ingress, g.sgRule(arn, "ingress", ruleSpec{"tcp", port, port, "0.0.0.0/0", "temporary"}, i))
		}
	}
	if ingress == nil {
		ingress = []any{}
	}
	return snapshot.Resource{UID: arn, Type: "aws.ec2.security_group", Name: name, Account: a, Region: region,
		Scope: "aws/" + a + "/ec2/" + region, Attributes: map[string]any{
			"group_id": id, "group_name": name, "vpc_id": vpc, "description": desc,
			"is_default": isDefault, "ingress": ingress, "egress": egress}}
}

// varyRanges makes a firewall's source ranges unique to resource i in the none mode by
// adding a private /32 address that only i has: private addresses are never the
// internet, so every decision stays the same.
func (g *gen) varyRanges(ranges []string, i int) []any {
	if !g.unique {
		return strs(ranges...)
	}
	return strs(append(append([]string{}, ranges...), fmt.Sprintf("10.%d.%d.%d/32", i>>16&255, i>>8&255, i&255))...)
}

func (g *gen) firewallR(i int, bad bool) snapshot.Resource {
	s := g.enter(i)
	p := project(i)
	var name string
	var spec firewallSpec
	switch {
	case s.firewalls < len(defaultFirewalls):
		// Every project starts with its default network's rules.
		name, spec = defaultFirewalls[s.firewalls].name, defaultFirewalls[s.firewalls].spec
		s.firewalls++
	case bad:
		name = fmt.Sprintf("allow-web-%d", i)
		spec = firewallSpec{"prod-vpc", 1000, []string{"0.0.0.0/0"}, []string{"web"},
			[]any{fwAllow("tcp", []string{"22", "3389", "5432", "0-65535"}[g.r.IntN(4)])}}
	case g.r.Float64() < firewallTemplated:
		t := firewallTemplates[g.r.IntN(len(firewallTemplates))]
		name, spec = fmt.Sprintf("%s-%d", t.name, i), t.spec
	default:
		name = fmt.Sprintf("allow-svc-%d", i)
		spec = firewallSpec{"prod-vpc", 1000, []string{fmt.Sprintf("10.%d.%d.%d/32", i>>16&255, i>>8&255, i&255)}, []string{"svc"},
			[]any{fwAllow("tcp", fmt.Sprint(1024+i%50000))}}
	}
	return snapshot.Resource{UID: fmt.Sprintf("//compute.googleapis.com/projects/%s/global/firewalls/%s", p, name), Type: "gcp.compute.firewall",
		Name: name, Account: p, Region: "global", Scope: "gcp/" + p + "/compute", Attributes: map[string]any{
			"network": spec.network, "direction": "INGRESS", "disabled": false, "priority": spec.priority,
			"source_ranges": g.varyRanges(spec.ranges, i), "source_tags": []any{}, "target_tags": strs(spec.targets...),
			"allowed": spec.allowed, "denied": []any{}}}
}

func (g *gen) projectPolicyR(i int, bad bool) snapshot.Resource {
	p := fmt.Sprintf("%s-%d", project(i), i)
	var bindings []any
	if g.r.Float64() < projectTemplated {
		bindings = bindingTemplates[g.r.IntN(len(bindingTemplates))]
	} else {
		bindings = []any{
			binding("roles/viewer", "group:eng@example.com"),
			binding("roles/storage.objectViewer", fmt.Sprintf("serviceAccount:sa-%d@%s.iam.gserviceaccount.com", i, p)),
		}
	}
	if g.unique || bad {
		bindings = append([]any{}, bindings...)
	}
	if g.unique {
		// A member only this project has, on the first binding (a viewer-like role).
		b := maps.Clone(bindings[0].(map[string]any))
		b["members"] = append(append([]any{}, b["members"].([]any)...), fmt.Sprintf("serviceAccount:app-%d@%s.iam.gserviceaccount.com", i, p))
		bindings[0] = b
	}
	if bad {
		bindings = append(bindings, binding("roles/editor", "user:contractor@gmail.com"))
	}
	return snapshot.Resource{UID: "//cloudresourcemanager.googleapis.com/projects/" + p, Type: "gcp.project.iam_policy", Name: p,
		Account: p, Region: "global", Scope: "gcp/" + p + "/iam", Attributes: map[string]any{
			"project_id": p, "project_number": fmt.Sprintf("%012d", i), "organization_domain": "example.com", "etag": "BwX=", "bindings": bindings}}
}
