package synth

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/warden-sec/warden/snapshot"
)

// Options shape a synthetic snapshot.
type Options struct {
	Resources int
	Seed      uint64
	// ViolationRate is the share of resources made to violate a policy; 0 means 0.1.
	ViolationRate float64
	CollectedAt   time.Time // zero means 2026-11-30T12:00:00Z
	// Repetition says how often resources share content; the zero value keeps the
	// generator's original output byte for byte.
	Repetition Repetition
}

// Repetition is how much content resources of a type share (see the package doc).
type Repetition string

const (
	// RepetitionDefault is the original generator: names and documents shaped by the
	// resource index, unchanged so that results measured with it stay comparable.
	RepetitionDefault Repetition = ""
	// RepetitionRealistic repeats content the way real organisations do: AWS-managed
	// policies in every account, documents stamped out by modules, default security
	// groups and firewalls, rule sets and bindings from templates.
	RepetitionRealistic Repetition = "realistic"
	// RepetitionNone gives every IAM document, security-group rule set, firewall and
	// binding set a content of its own, with the same resources and shapes as
	// RepetitionRealistic for the same seed.
	RepetitionNone Repetition = "none"
)

// ParseRepetition reads a --repetition value: "realistic", "none", or "" for the default.
func ParseRepetition(s string) (Repetition, error) {
	switch r := Repetition(s); r {
	case RepetitionDefault, RepetitionRealistic, RepetitionNone:
		return r, nil
	}
	return "", fmt.Errorf("unknown repetition %q: want realistic or none", s)
}

// kind is one resource type's share of the mix and how to make one.
type kind struct {
	weight int
	make   func(g *gen, i int, bad bool) snapshot.Resource
}

// mix is the default mode's; repeatMix has the same weights in the same order, so that
// every mode draws the same types for a seed.
var mix = []kind{
	{25, (*gen).role},
	{14, (*gen).policy},
	{10, (*gen).user},
	{12, (*gen).accessKey},
	{15, (*gen).securityGroup},
	{3, (*gen).acmCert},
	{2, (*gen).group},
	{6, (*gen).serviceAccount},
	{5, (*gen).serviceAccountKey},
	{5, (*gen).firewall},
	{1, (*gen).projectPolicy},
	{1, (*gen).tlsEndpoint},
	{1, (*gen).passwordPolicy},
}

var repeatMix = []kind{
	{25, (*gen).roleR},
	{14, (*gen).policyR},
	{10, (*gen).user},
	{12, (*gen).accessKey},
	{15, (*gen).securityGroupR},
	{3, (*gen).acmCert},
	{2, (*gen).groupR},
	{6, (*gen).serviceAccount},
	{5, (*gen).serviceAccountKey},
	{5, (*gen).firewallR},
	{1, (*gen).projectPolicyR},
	{1, (*gen).tlsEndpoint},
	{1, (*gen).passwordPolicy},
}

const resourcesPerAccount = 2000

var regions = []string{"us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"}

type gen struct {
	r   *rand.Rand
	now time.Time
	// Used by the realistic and none modes only.
	unique   bool // none: make every document and rule set unique
	accounts int
	st       acctState
}

// Write streams a synthetic snapshot of opts.Resources resources to w.
func Write(w io.Writer, opts Options) error {
	if opts.Resources < 0 {
		return fmt.Errorf("synth: resources must not be negative, got %d", opts.Resources)
	}
	rate := opts.ViolationRate
	if rate == 0 {
		rate = 0.1
	}
	if _, err := ParseRepetition(string(opts.Repetition)); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	now := opts.CollectedAt
	if now.IsZero() {
		now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	}
	g := &gen{r: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)), now: now}
	accounts := max(1, (opts.Resources+resourcesPerAccount-1)/resourcesPerAccount)
	g.accounts, g.unique = accounts, opts.Repetition == RepetitionNone
	h := snapshot.Header{CollectedAt: now, Source: fmt.Sprintf("warden synth --resources %d --seed %d", opts.Resources, opts.Seed)}
	kinds := mix
	if opts.Repetition != RepetitionDefault {
		h.Source += " --repetition " + string(opts.Repetition)
		kinds = repeatMix
	}
	for a := range accounts {
		h.Accounts = append(h.Accounts, acct(a))
	}
	sw, err := snapshot.NewWriter(w, h)
	if err != nil {
		return err
	}
	total := 0
	for _, k := range kinds {
		total += k.weight
	}
	scopes := map[string]snapshot.Scope{}
	var order []string
	for i := range opts.Resources {
		pick := g.r.IntN(total)
		var k kind
		for _, k = range kinds {
			if pick < k.weight {
				break
			}
			pick -= k.weight
		}
		res := k.make(g, i, g.r.Float64() < rate)
		if _, ok := scopes[res.Scope]; !ok {
			order = append(order, res.Scope)
			scopes[res.Scope] = scopeOf(res)
		}
		s := scopes[res.Scope]
		s.Resources++
		scopes[res.Scope] = s
		if err := sw.Write(res); err != nil {
			return err
		}
	}
	for _, id := range order {
		sw.AddScope(scopes[id])
	}
	return sw.Close()
}

func scopeOf(r snapshot.Resource) snapshot.Scope {
	provider, service := "aws", ""
	switch r.Type[:3] {
	case "gcp":
		provider = "gcp"
	case "tls":
		provider = "tls"
	}
	if provider != "tls" {
		service = r.Type[4:]
		service = service[:indexByte(service, '.')]
	}
	region := r.Region
	if region == "global" {
		region = ""
	}
	return snapshot.Scope{ID: r.Scope, Provider: provider, Account: r.Account, Service: service, Region: region, Status: snapshot.ScopeOK}
}

func indexByte(s string, c byte) int {
	for i := range len(s) {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

func acct(a int) string { return fmt.Sprintf("%012d", 100000000000+a*7919) }

func (g *gen) account(i int) string { return acct(i / resourcesPerAccount) }

func (g *gen) ago(days int) string {
	return g.now.Add(-time.Duration(days)*24*time.Hour - time.Duration(g.r.IntN(86400))*time.Second).Format(time.RFC3339)
}

func (g *gen) ahead(days int) string {
	return g.now.Add(time.Duration(days) * 24 * time.Hour).Format(time.RFC3339)
}

func (g *gen) iam(i int, typ, kindPath, name string, attrs map[string]any) snapshot.Resource {
	a := g.account(i)
	return snapshot.Resource{UID: fmt.Sprintf("arn:aws:iam::%s:%s/%s", a, kindPath, name), Type: typ, Name: name,
		Account: a, Region: "global", Scope: "aws/" + a + "/iam", Attributes: attrs}
}

func doc(stmts ...map[string]any) map[string]any {
	list := make([]any, len(stmts))
	for i, s := range stmts {
		list[i] = s
	}
	return map[string]any{"Version": "2012-10-17", "Statement": list}
}

func (g *gen) narrowStatement(i int) map[string]any {
	svc := []string{"s3", "dynamodb", "sqs", "logs", "cloudwatch"}[g.r.IntN(5)]
	return map[string]any{"Effect": "Allow",
		"Action":   []any{svc + ":Get*", svc + ":List*", svc + ":Describe*"},
		"Resource": fmt.Sprintf("arn:aws:%s:::%s-data-%d/*", svc, svc, i%97)}
}

func (g *gen) badStatement() map[string]any {
	switch g.r.IntN(4) {
	case 0:
		return map[string]any{"Effect": "Allow", "Action": "*", "Resource": "*"}
	case 1:
		return map[string]any{"Effect": "Allow", "Action": "iam:*", "Resource": "*"}
	case 2:
		return map[string]any{"Effect": "Allow", "Action": []any{"iam:PassRole", "ec2:RunInstances"}, "Resource": "*"}
	default:
		return map[string]any{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}
	}
}

func (g *gen) trust(i int, bad bool) map[string]any {
	if bad {
		if g.r.IntN(2) == 0 {
			return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "*"}, "Action": "sts:AssumeRole"})
		}
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::999988887777:root"}, "Action": "sts:AssumeRole"})
	}
	if i%3 == 0 {
		return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"AWS": "arn:aws:iam::" + g.account(i) + ":root"}, "Action": "sts:AssumeRole"})
	}
	svc := []string{"ec2.amazonaws.com", "lambda.amazonaws.com", "ecs-tasks.amazonaws.com"}[i%3]
	return doc(map[string]any{"Effect": "Allow", "Principal": map[string]any{"Service": svc}, "Action": "sts:AssumeRole"})
}

func (g *gen) role(i int, bad bool) snapshot.Resource {
	name := fmt.Sprintf("app-%d-role", i)
	lastUsed := any(g.ago(g.r.IntN(30)))
	if bad && g.r.IntN(3) == 0 {
		lastUsed = g.ago(120 + g.r.IntN(300))
		bad = false
	}
	inline := []any{}
	if bad && g.r.IntN(2) == 0 {
		inline = append(inline, map[string]any{"name": "inline-admin", "document": doc(g.badStatement())})
		bad = false
	} else {
		inline = append(inline, map[string]any{"name": "data-access", "document": doc(g.narrowStatement(i))})
	}
	return g.iam(i, "aws.iam.role", "role", name, map[string]any{
		"path": "/", "role_id": fmt.Sprintf("AROA%016X", i), "created": g.ago(200 + g.r.IntN(800)),
		"assume_role_policy": g.trust(i, bad), "last_used": lastUsed, "last_used_region": "us-east-1",
		"service_linked": false, "max_session_duration": 3600,
		"attached_policies": []any{map[string]any{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "name": "ReadOnlyAccess"}},
		"inline_policies":   inline,
	})
}

func (g *gen) policy(i int, bad bool) snapshot.Resource {
	st := []map[string]any{g.narrowStatement(i), g.narrowStatement(i + 1)}
	if bad {
		st = append(st, g.badStatement())
	}
	name := fmt.Sprintf("app-%d-policy", i)
	return g.iam(i, "aws.iam.policy", "policy", name, map[string]any{
		"policy_id": fmt.Sprintf("ANPA%016X", i), "path": "/", "aws_managed": false, "attachment_count": 1 + g.r.IntN(3),
		"default_version_id": "v1", "created": g.ago(300), "updated": g.ago(30), "document": doc(st...),
		"attached_to": map[string]any{"users": []any{}, "groups": []any{}, "roles": []any{fmt.Sprintf("app-%d-role", i)}},
	})
}

func (g *gen) user(i int, bad bool) snapshot.Resource {
	name := fmt.Sprintf("user-%d", i)
	mfa, pw := true, i%2 == 0
	var attached []any
	if bad {
		switch g.r.IntN(3) {
		case 0:
			mfa, pw = false, true
		case 1:
			attached = []any{map[string]any{"arn": "arn:aws:iam::aws:policy/PowerUserAccess", "name": "PowerUserAccess"}}
		default:
			pw = true
		}
	}
	pwUsed := any(nil)
	if pw {
		pwUsed = g.ago(g.r.IntN(20))
		if bad && mfa && attached == nil {
			pwUsed = g.ago(60 + g.r.IntN(100))
		}
	}
	return g.iam(i, "aws.iam.user", "user", name, map[string]any{
		"user_id": fmt.Sprintf("AIDA%016X", i), "path": "/", "created": g.ago(400), "password_enabled": pw,
		"password_last_used": pwUsed, "mfa_active": mfa,
		"access_keys": []any{map[string]any{"id": fmt.Sprintf("AKIA%016X", i), "status": "Active", "created": g.ago(30), "last_used": g.ago(1)}},
		"groups":      []any{"engineers"}, "attached_policies": attached, "inline_policies": []any{},
	})
}

func (g *gen) accessKey(i int, bad bool) snapshot.Resource {
	id := fmt.Sprintf("AKIA%016X", i)
	user := fmt.Sprintf("svc-%d", i)
	created, used := g.ago(g.r.IntN(80)), any(g.ago(g.r.IntN(5)))
	if bad {
		if g.r.IntN(2) == 0 {
			created = g.ago(100 + g.r.IntN(500))
		} else {
			used = nil
			created = g.ago(95 + g.r.IntN(30))
		}
	}
	a := g.account(i)
	return snapshot.Resource{UID: fmt.Sprintf("arn:aws:iam::%s:user/%s/accesskey/%s", a, user, id), Type: "aws.iam.access_key",
		Name: id, Account: a, Region: "global", Scope: "aws/" + a + "/iam", Attributes: map[string]any{
			"access_key_id": id, "user_name": user, "user_arn": fmt.Sprintf("arn:aws:iam::%s:user/%s", a, user),
			"status": "Active", "created": created, "last_used": used, "last_used_service": "s3", "last_used_region": "us-east-1"}}
}

func (g *gen) group(i int, bad bool) snapshot.Resource {
	st := g.narrowStatement(i)
	if bad {
		st = g.badStatement()
	}
	return g.iam(i, "aws.iam.group", "group", fmt.Sprintf("team-%d", i), map[string]any{
		"path": "/", "created": g.ago(500), "members": []any{fmt.Sprintf("user-%d", i)},
		"attached_policies": []any{}, "inline_policies": []any{map[string]any{"name": "team-access", "document": doc(st)}},
	})
}

func (g *gen) passwordPolicy(i int, bad bool) snapshot.Resource {
	length, reuse := 14+g.r.IntN(4), 24
	if bad {
		length, reuse = 8, 0
	}
	a := g.account(i)
	return snapshot.Resource{UID: fmt.Sprintf("arn:aws:iam::%s:account-password-policy/%d", a, i), Type: "aws.iam.password_policy",
		Name: "password-policy", Account: a, Region: "global", Scope: "aws/" + a + "/iam", Attributes: map[string]any{
			"exists": true, "minimum_password_length": length, "password_reuse_prevention": reuse,
			"require_symbols": true, "require_numbers": true, "require_uppercase_characters": true,
			"require_lowercase_characters": true, "allow_users_to_change_password": true, "max_password_age": 90}}
}

func (g *gen) rule(sgARN, dir, proto string, from, to int, cidr string) map[string]any {
	return map[string]any{"id": fmt.Sprintf("%s#%s/%s/%d-%d/%s", sgARN, dir, proto, from, to, cidr), "direction": dir,
		"protocol": proto, "from_port": from, "to_port": to, "cidr": cidr, "source_group": "", "description": ""}
}

func (g *gen) securityGroup(i int, bad bool) snapshot.Resource {
	a, region := g.account(i), regions[i%len(regions)]
	id := fmt.Sprintf("sg-%017x", i)
	arn := fmt.Sprintf("arn:aws:ec2:%s:%s:security-group/%s", region, a, id)
	ingress := []any{g.rule(arn, "ingress", "tcp", 443, 443, "0.0.0.0/0"), g.rule(arn, "ingress", "tcp", 5432, 5432, "10.0.0.0/8")}
	if bad {
		port := []int{22, 3389, 3306, 6379}[g.r.IntN(4)]
		ingress = append(ingress, g.rule(arn, "ingress", "tcp", port, port, "0.0.0.0/0"))
	}
	return snapshot.Resource{UID: arn, Type: "aws.ec2.security_group", Name: fmt.Sprintf("web-%d", i), Account: a, Region: region,
		Scope: "aws/" + a + "/ec2/" + region, Attributes: map[string]any{
			"group_id": id, "group_name": fmt.Sprintf("web-%d", i), "vpc_id": fmt.Sprintf("vpc-%08x", i/50), "description": "web tier",
			"is_default": false, "ingress": ingress, "egress": []any{g.rule(arn, "egress", "-1", -1, -1, "0.0.0.0/0")}}}
}

func (g *gen) cert(bad bool) map[string]any {
	notAfter, bits, sig := g.ahead(60+g.r.IntN(300)), 2048, "SHA256-RSA"
	if bad {
		switch g.r.IntN(3) {
		case 0:
			notAfter = g.ahead(-3)
		case 1:
			bits = 1024
		default:
			sig = "SHA1-RSA"
		}
	}
	return map[string]any{"subject": "CN=svc.example.com", "issuer": "CN=Amazon RSA 2048 M02", "serial": "01",
		"not_before": g.ago(100), "not_after": notAfter, "dns_names": []any{"svc.example.com"},
		"key_algorithm": "RSA", "key_size": bits, "signature_algorithm": sig, "self_signed": false, "is_ca": false}
}

func (g *gen) acmCert(i int, bad bool) snapshot.Resource {
	a, region := g.account(i), regions[i%len(regions)]
	arn := fmt.Sprintf("arn:aws:acm:%s:%s:certificate/%08x-0000-4000-8000-%012x", region, a, i, i)
	return snapshot.Resource{UID: arn, Type: "aws.acm.certificate", Name: "svc.example.com", Account: a, Region: region,
		Scope: "aws/" + a + "/acm/" + region, Attributes: map[string]any{
			"domain_name": "svc.example.com", "subject_alternative_names": []any{"svc.example.com"}, "status": "ISSUED",
			"cert_type": "IMPORTED", "in_use_by": []any{}, "renewal_eligibility": "INELIGIBLE", "renewal_status": "",
			"certificate": g.cert(bad)}}
}

func project(i int) string { return fmt.Sprintf("proj-%d", i/resourcesPerAccount) }

func (g *gen) serviceAccount(i int, _ bool) snapshot.Resource {
	p := project(i)
	email := fmt.Sprintf("sa-%d@%s.iam.gserviceaccount.com", i, p)
	return snapshot.Resource{UID: fmt.Sprintf("//iam.googleapis.com/projects/%s/serviceAccounts/%s", p, email), Type: "gcp.iam.service_account",
		Name: email, Account: p, Region: "global", Scope: "gcp/" + p + "/iam", Attributes: map[string]any{
			"email": email, "unique_id": fmt.Sprintf("1%020d", i), "display_name": "workload", "disabled": false, "default_compute": false}}
}

func (g *gen) serviceAccountKey(i int, bad bool) snapshot.Resource {
	p := project(i)
	email := fmt.Sprintf("sa-%d@%s.iam.gserviceaccount.com", i, p)
	age := g.r.IntN(80)
	if bad {
		age = 100 + g.r.IntN(400)
	}
	key := fmt.Sprintf("%040x", i)
	return snapshot.Resource{UID: fmt.Sprintf("//iam.googleapis.com/projects/%s/serviceAccounts/%s/keys/%s", p, email, key), Type: "gcp.iam.service_account_key",
		Name: key, Account: p, Region: "global", Scope: "gcp/" + p + "/iam", Attributes: map[string]any{
			"key_id": key, "service_account": email, "key_type": "USER_MANAGED", "valid_after": g.ago(age),
			"valid_before": g.ahead(3650), "disabled": false, "key_algorithm": "KEY_ALG_RSA_2048"}}
}

func (g *gen) firewall(i int, bad bool) snapshot.Resource {
	p := project(i)
	name := fmt.Sprintf("allow-web-%d", i)
	ranges, ports := []any{"0.0.0.0/0"}, []any{"443"}
	if bad {
		ports = []any{[]string{"22", "3389", "5432", "0-65535"}[g.r.IntN(4)]}
	} else if i%2 == 0 {
		ranges, ports = []any{"10.128.0.0/9"}, []any{"22", "8080-8090"}
	}
	return snapshot.Resource{UID: fmt.Sprintf("//compute.googleapis.com/projects/%s/global/firewalls/%s", p, name), Type: "gcp.compute.firewall",
		Name: name, Account: p, Region: "global", Scope: "gcp/" + p + "/compute", Attributes: map[string]any{
			"network": "prod-vpc", "direction": "INGRESS", "disabled": false, "priority": 1000, "source_ranges": ranges,
			"source_tags": []any{}, "target_tags": []any{"web"}, "allowed": []any{map[string]any{"protocol": "tcp", "ports": ports}}, "denied": []any{}}}
}

func (g *gen) projectPolicy(i int, bad bool) snapshot.Resource {
	p := fmt.Sprintf("%s-%d", project(i), i)
	bindings := []any{
		map[string]any{"role": "roles/viewer", "members": []any{"group:eng@example.com"}, "condition": nil},
		map[string]any{"role": "roles/storage.objectViewer", "members": []any{fmt.Sprintf("serviceAccount:sa-%d@%s.iam.gserviceaccount.com", i, p)}, "condition": nil},
	}
	if bad {
		bindings = append(bindings, map[string]any{"role": "roles/editor", "members": []any{"user:contractor@gmail.com"}, "condition": nil})
	}
	return snapshot.Resource{UID: "//cloudresourcemanager.googleapis.com/projects/" + p, Type: "gcp.project.iam_policy", Name: p,
		Account: p, Region: "global", Scope: "gcp/" + p + "/iam", Attributes: map[string]any{
			"project_id": p, "project_number": fmt.Sprintf("%012d", i), "organization_domain": "example.com", "etag": "BwX=", "bindings": bindings}}
}

func (g *gen) tlsEndpoint(i int, bad bool) snapshot.Resource {
	host := fmt.Sprintf("svc-%d.example.com", i)
	protocols, trusted := []any{"TLS1.2", "TLS1.3"}, true
	if bad && g.r.IntN(2) == 0 {
		protocols, bad = []any{"TLS1.0", "TLS1.1", "TLS1.2"}, false
	}
	return snapshot.Resource{UID: fmt.Sprintf("tls://%s:443", host), Type: "tls.endpoint", Name: host + ":443", Account: host,
		Scope: "tls/" + host + ":443", Attributes: map[string]any{
			"host": host, "port": 443, "sni": host, "reachable": true, "certificate": g.cert(bad), "chain": []any{},
			"trusted": trusted, "verify_error": "", "hostname_match": true, "protocols": protocols, "min_protocol": protocols[0]}}
}
