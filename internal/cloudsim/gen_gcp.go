package cloudsim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// GeneratedProjects makes GCP projects on demand instead of listing them in the world:
// gcp.generated. Project i (0 ≤ i < Projects) has the id PREFIX-NNNNN (gen-proj-00042)
// and the number FirstNumber+i, and is built, when a call first needs it, from (Seed, its
// id) alone, then kept among the Cache most recently used projects, as generated AWS
// accounts are (GeneratedAccounts; writes survive eviction the same way):
//
//	gcp:
//	  generated:
//	    projects: 500
//	    parent: organizations/123456789012
//	    seed: 1
//	    resources: 2000       # per project
//	    fault_share: 0.05
//
// Project content: 35% service accounts (85% holding a user-managed key), 30% firewall
// rules on the default network (its four default rules first: default-allow-ssh, -rdp,
// -icmp, -internal, as in real projects; then one of a few rule templates each), and the
// project's IAM policy, one of a few binding sets. Generated projects do not drift.
type GeneratedProjects struct {
	// Projects is how many projects are generated besides gcp.projects.
	Projects int `yaml:"projects"`
	// Parent is every generated project's parent, organizations/N or folders/N; empty:
	// none.
	Parent string `yaml:"parent,omitempty"`
	// Prefix starts the projects' ids; default gen-proj.
	Prefix string `yaml:"prefix,omitempty"`
	// FirstNumber is the first project's number; default 700000000000.
	FirstNumber string `yaml:"first_number,omitempty"`
	// Seed draws the projects' content and faults; 0 picks 1.
	Seed uint64 `yaml:"seed,omitempty"`
	// Resources is the size of each project; default 2000.
	Resources int `yaml:"resources,omitempty"`
	// Cache is how many projects are held built at once; default 16.
	Cache int `yaml:"cache,omitempty"`
	// FaultShare and Faults are as GeneratedAccounts': the share of projects whose calls
	// meet one of Faults (default: denied, half throttled, half failing).
	FaultShare float64 `yaml:"fault_share,omitempty"`
	Faults     []Fault `yaml:"faults,omitempty"`
}

func (g GeneratedProjects) withDefaults() GeneratedProjects {
	if g.Prefix == "" {
		g.Prefix = "gen-proj"
	}
	if g.FirstNumber == "" {
		g.FirstNumber = "700000000000"
	}
	if g.Seed == 0 {
		g.Seed = 1
	}
	if g.Resources == 0 {
		g.Resources = 2000
	}
	if g.Cache == 0 {
		g.Cache = 16
	}
	if len(g.Faults) == 0 {
		g.Faults = defaultGenFaults
	}
	return g
}

// validate checks g, defaults filled in.
func (g GeneratedProjects) validate() error {
	first, err := strconv.ParseInt(g.FirstNumber, 10, 64)
	switch {
	case g.Projects < 1:
		return fmt.Errorf("projects: want at least 1, got %d", g.Projects)
	case err != nil || first < 1 || g.FirstNumber[0] == '0':
		return fmt.Errorf("first_number: %q is not a project number", g.FirstNumber)
	case !projectIDPattern(g.Prefix + "-00000"):
		return fmt.Errorf("prefix: %q does not make project ids (lower-case letters, digits, hyphens, from a letter)", g.Prefix)
	case g.Parent != "" && !strings.HasPrefix(g.Parent, "organizations/") && !strings.HasPrefix(g.Parent, "folders/"):
		return fmt.Errorf("parent: %q is not organizations/N or folders/N", g.Parent)
	case g.Resources < 0 || g.Cache < 0:
		return fmt.Errorf("resources and cache are counts, not negative")
	case !shareOK(g.FaultShare):
		return fmt.Errorf("fault_share is a share between 0 and 1")
	}
	for i, f := range g.Faults {
		if f.Account != "" {
			return fmt.Errorf("faults[%d].account: the projects are drawn by fault_share", i)
		}
		if err := f.validate(); err != nil {
			return fmt.Errorf("faults[%d]: %w", i, err)
		}
	}
	return nil
}

// projectIDPattern reports whether id is a valid GCP project id: 6–30 lower-case
// letters, digits and hyphens, from a letter, not ending in a hyphen.
func projectIDPattern(id string) bool {
	if len(id) < 6 || len(id) > 30 || id[0] < 'a' || id[0] > 'z' || id[len(id)-1] == '-' {
		return false
	}
	return strings.Trim(id, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// index is the position of a project, by id or number, among the generated ones, or -1.
func (g GeneratedProjects) index(key string) int {
	if rest, ok := strings.CutPrefix(key, g.Prefix+"-"); ok {
		i, err := strconv.Atoi(rest)
		if err == nil && i >= 0 && i < g.Projects && g.id(i) == key {
			return i
		}
		return -1
	}
	n, err := strconv.ParseInt(key, 10, 64)
	first, _ := strconv.ParseInt(g.FirstNumber, 10, 64)
	if err != nil || n < first || n >= first+int64(g.Projects) || strconv.FormatInt(n, 10) != key {
		return -1
	}
	return int(n - first)
}

func (g GeneratedProjects) id(i int) string { return fmt.Sprintf("%s-%05d", g.Prefix, i) }

// header is what Resource Manager says of generated project i, without building it.
func (g GeneratedProjects) header(i int) *Project {
	first, _ := strconv.ParseInt(g.FirstNumber, 10, 64)
	id := g.id(i)
	return &Project{ID: id, Number: strconv.FormatInt(first+int64(i), 10), Name: id, Parent: g.Parent}
}

// The content generated projects share, as Terraform modules share it.
var (
	genDefaultFirewalls = []*Firewall{
		{Name: "default-allow-ssh", Network: "default", Priority: 65534, SourceRanges: []string{"0.0.0.0/0"}, Allowed: []FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}},
		{Name: "default-allow-rdp", Network: "default", Priority: 65534, SourceRanges: []string{"0.0.0.0/0"}, Allowed: []FirewallRule{{Protocol: "tcp", Ports: []string{"3389"}}}},
		{Name: "default-allow-icmp", Network: "default", Priority: 65534, SourceRanges: []string{"0.0.0.0/0"}, Allowed: []FirewallRule{{Protocol: "icmp"}}},
		{Name: "default-allow-internal", Network: "default", Priority: 65534, SourceRanges: []string{"10.128.0.0/9"},
			Allowed: []FirewallRule{{Protocol: "tcp", Ports: []string{"0-65535"}}, {Protocol: "udp", Ports: []string{"0-65535"}}, {Protocol: "icmp"}}},
	}
	genFirewallRules = []struct {
		ranges  []string
		allowed []FirewallRule
	}{
		{[]string{"0.0.0.0/0"}, []FirewallRule{{Protocol: "tcp", Ports: []string{"443"}}}},
		{[]string{"0.0.0.0/0"}, []FirewallRule{{Protocol: "tcp", Ports: []string{"80", "443"}}}},
		{[]string{"10.0.0.0/8"}, []FirewallRule{{Protocol: "tcp", Ports: []string{"5432"}}}},
		{[]string{"35.235.240.0/20"}, []FirewallRule{{Protocol: "tcp", Ports: []string{"22"}}}},                   // IAP
		{[]string{"130.211.0.0/22", "35.191.0.0/16"}, []FirewallRule{{Protocol: "tcp", Ports: []string{"8080"}}}}, // health checks
	}
	genKeyAfter = time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
)

// genProject builds generated project i of g, prepared to serve.
func (s *Sim) genProject(g *GeneratedProjects, i int) *Project {
	p := g.header(i)
	rng := rand.New(rand.NewPCG(g.Seed, mix(g.Seed, "project", p.ID)))
	nSA, nFW := max(1, g.Resources*35/100), max(len(genDefaultFirewalls), g.Resources*30/100)
	p.Networks = []*Network{{Name: "default", AutoCreateSubnetworks: true}}
	used := genKeyAfter.AddDate(1, 5, 0)
	for j := range nSA {
		sa := &ServiceAccount{Email: fmt.Sprintf("sa-%05d@%s.iam.gserviceaccount.com", j, p.ID), DisplayName: fmt.Sprintf("workload %d", j)}
		if rng.IntN(100) < 85 {
			k := &SAKey{ID: makeID("", p.ID+"/"+sa.Email+"/key", 40), ValidAfter: genKeyAfter.Add(time.Duration(j) * time.Minute), ValidBefore: userKeyExpiry}
			if rng.IntN(2) == 0 {
				k.LastAuthenticated = &used
				sa.LastAuthenticated = &used
			}
			sa.Keys = []*SAKey{k}
		}
		p.ServiceAccounts = append(p.ServiceAccounts, sa)
	}
	for _, f := range genDefaultFirewalls {
		c := *f
		p.Firewalls = append(p.Firewalls, &c)
	}
	for j := len(genDefaultFirewalls); j < nFW; j++ {
		t := genFirewallRules[rng.IntN(len(genFirewallRules))]
		p.Firewalls = append(p.Firewalls, &Firewall{Name: fmt.Sprintf("allow-app-%05d", j), Network: "default",
			SourceRanges: t.ranges, Allowed: t.allowed, TargetTags: []string{fmt.Sprintf("app-%d", j%40)}})
	}
	ci := "serviceAccount:sa-00000@" + p.ID + ".iam.gserviceaccount.com"
	sets := [][]Binding{
		{{Role: "roles/owner", Members: []string{"group:platform-admins@example.com"}}, {Role: "roles/viewer", Members: []string{"group:developers@example.com"}}},
		{{Role: "roles/owner", Members: []string{"group:platform-admins@example.com"}}, {Role: "roles/editor", Members: []string{ci}}},
		{{Role: "roles/owner", Members: []string{"user:founder@example.com"}}, {Role: "roles/viewer", Members: []string{"group:developers@example.com", "group:sre@example.com"}}},
		{{Role: "roles/owner", Members: []string{"group:platform-admins@example.com"}}, {Role: "roles/iam.serviceAccountUser", Members: []string{ci}}},
	}
	p.IAMPolicy.Bindings = sets[rng.IntN(len(sets))]
	// One instance per hundred resources, tagged so that every generated rule's app tag
	// (app-0 … app-39) is on some instance: the generated rules all target something, and
	// a generated organisation has no unused rule to report.
	nVM := max(1, g.Resources/100)
	for j := range nVM {
		var tags []string
		for k := j; k < 40; k += nVM {
			tags = append(tags, fmt.Sprintf("app-%d", k))
		}
		p.Instances = append(p.Instances, &Instance{Name: fmt.Sprintf("vm-%05d", j), Zone: "us-central1-" + string(rune('a'+j%3)),
			Tags: tags, ServiceAccounts: []string{p.ServiceAccounts[j%nSA].Email}})
	}
	s.prepareProject(p)
	return p
}

// genProjects is the simulator's side of generated projects: their configuration and
// cache. s.mu guards it.
type genProjects struct {
	cfg   GeneratedProjects // defaults filled in
	cache *genCache[Project]
}

func (s *Sim) newGenProjects(cfg GeneratedProjects) *genProjects {
	g := &genProjects{cfg: cfg.withDefaults()}
	g.cache = newGenCache(g.cfg.Cache, func(id string, _ int) (*Project, error) {
		return s.genProject(&g.cfg, g.cfg.index(id)), nil
	})
	return g
}

// project finds generated project key (id or number), built if it is not held; nil when
// it is not one of them.
func (g *genProjects) project(key string) *Project {
	if g == nil {
		return nil
	}
	i := g.cfg.index(key)
	if i < 0 {
		return nil
	}
	p, _ := g.cache.get(g.cfg.id(i)) // building a project does not fail
	return p
}

// headers are what Resource Manager says of every generated project, built for one answer
// (the projects themselves are not).
func (g *genProjects) headers() []*Project {
	if g == nil {
		return nil
	}
	out := make([]*Project, g.cfg.Projects)
	for i := range out {
		out[i] = g.cfg.header(i)
	}
	return out
}

// faultOf is the fault the calls on generated project id meet, or nil.
func (g *genProjects) faultOf(id string) *Fault {
	if g == nil || g.cfg.FaultShare == 0 || g.cfg.index(id) < 0 {
		return nil
	}
	if unit(mix(g.cfg.Seed, "fault", id)) >= g.cfg.FaultShare {
		return nil
	}
	return &g.cfg.Faults[mix(g.cfg.Seed, "fault-kind", id)%uint64(len(g.cfg.Faults))]
}

// generatedFault is the fault of a generated account or project, or nil.
func (s *Sim) generatedFault(scope string) *Fault {
	if f := s.gen.faultOf(scope); f != nil {
		return f
	}
	return s.genProj.faultOf(scope)
}

// GeneratedProjectStats reports the generated projects' cache (GET /_sim/generated);
// zero when there are none.
func (s *Sim) GeneratedProjectStats() GeneratedStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.genProj
	if g == nil {
		return GeneratedStats{}
	}
	st := GeneratedStats{Members: g.cfg.Projects, Cache: g.cfg.Cache}
	st.Held, st.Built, st.Evicted, st.Overlays, st.OverlayResources = g.cache.stats()
	return st
}
