package cloudsim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// GeneratedAccounts makes the organisation's accounts on demand instead of listing them
// in the world: aws.organization.generated. Account i (0 ≤ i < Accounts) has the id
// FirstID+i and is built, when a call first needs it, from (Seed, i) alone — the same
// content every time, whatever FirstID — then kept among the Cache most recently used
// accounts and dropped when it falls out. The simulator's memory therefore depends on
// Cache and Resources, not on Accounts:
//
//	aws:
//	  organization:
//	    id: o-generated1
//	    management: "200000000000"   # a generated account, or one of aws.accounts
//	    generated:
//	      accounts: 500              # ids 200000000000 … 200000000499
//	      first_id: "200000000000"
//	      seed: 1
//	      resources: 4000            # per account (4,025 as the sweep benchmark counts them)
//	      fault_share: 0.05          # accounts whose calls fail, drawn by seed
//	      faults: [{access_denied: true}, {throttle_rate: 0.5}, {error_rate: 0.5}]
//	      drift_rate: 0.01           # share of resources each POST /_sim/drift changes
//
// Writes survive eviction: when an account leaves the cache, what differs from its
// generated content (resources changed, added or removed, account settings) is kept as
// a small overlay and laid over the account when it is built again (gen_overlay.go).
// Drift (gen_drift.go) is a function of (Seed, account, drift epoch), applied as
// accounts are built, so it costs no memory per account either.
//
// Account content (gen_world.go, genAccount): a LargeAccount of Resources split 40% roles
// (a customer-managed policy every tenth), 25% users (5% with an access key, a group per
// 100) and 30% security groups over Regions, with the repetition of real organisations:
// trust policies and inline policies from a few templates, security-group rule sets from
// a few templates, one group in 50 open to the internet. Members hold
// OrganizationAccountAccessRole, trusting the management account, as the collector assumes,
// with AdministratorAccess (so that aws.enforce_iam lets it read): 4,025 resources for
// Resources 4000 as the sweep benchmark counts them, one more than its LargeAccounts.
//
// The world's latency, rate_limits (per service and account) and faults apply to generated
// accounts as to listed ones; a faulty account's fault comes on top.
//
// What memory remains per account once dropped: its overlay (about 1 KB when only its
// OrganizationAccountAccessRole recorded its use) and the sessions assumed into it, which
// the simulator keeps for its life as it does for listed accounts. The cache should hold
// at least as many accounts as clients read at once, or each call may build its account
// again (about 6 ms for 4,000 resources, under the simulator's lock); GET /_sim/generated
// tells.
//
// Limits: the keys of generated users sign nothing (calls signed with them act as the
// world's caller account, as unknown keys do); an organisation-wide Access Analyzer sees
// the listed accounts only; S3 buckets belong to listed accounts.
type GeneratedAccounts struct {
	// Accounts is how many accounts the organisation has besides aws.accounts.
	Accounts int `yaml:"accounts"`
	// FirstID is the first account's id, 12 digits; default 200000000000.
	FirstID string `yaml:"first_id,omitempty"`
	// Seed draws the accounts' content, faults and drift; 0 picks 1.
	Seed uint64 `yaml:"seed,omitempty"`
	// Resources is the size of each account; default 4000.
	Resources int `yaml:"resources,omitempty"`
	// Regions are each account's enabled regions, over which its security groups spread;
	// default us-east-1, eu-west-1, eu-central-1, ap-southeast-2.
	Regions []string `yaml:"regions,omitempty"`
	// Cache is how many accounts are held built at once; default 16.
	Cache int `yaml:"cache,omitempty"`
	// FaultShare is the share of member accounts (never the management account) whose
	// calls meet one of Faults, drawn per account from Seed.
	FaultShare float64 `yaml:"fault_share,omitempty"`
	// Faults are what a faulty account's calls meet, one per account drawn from Seed; the
	// match fields other than account apply (service: ec2 denies EC2 only). Default: an
	// account denies everything, throttles half its calls, or fails half with a 5xx.
	Faults []Fault `yaml:"faults,omitempty"`
	// DriftRate is the share of each account's resources one drift epoch changes (POST
	// /_sim/drift with no rate, Sim.Drift(0)).
	DriftRate float64 `yaml:"drift_rate,omitempty"`
	// AnswerCacheMiB keeps the encoded answers of the accounts' IAM and EC2 reads, up to
	// that many MiB, until the account next changes (answers.go); 0 keeps none. For
	// benchmarks, where the simulator shares the cores with the warden it serves.
	AnswerCacheMiB int `yaml:"answer_cache_mib,omitempty"`
}

// defaultGenFaults are the faults of faulty accounts when the world names none: denied,
// throttled, failing.
var defaultGenFaults = []Fault{{AccessDenied: true}, {ThrottleRate: 0.5}, {ErrorRate: 0.5}}

// withDefaults fills what the world left out.
func (g GeneratedAccounts) withDefaults() GeneratedAccounts {
	if g.FirstID == "" {
		g.FirstID = "200000000000"
	}
	if g.Seed == 0 {
		g.Seed = 1
	}
	if g.Resources == 0 {
		g.Resources = 4000
	}
	if len(g.Regions) == 0 {
		g.Regions = []string{"us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"}
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
func (g GeneratedAccounts) validate() error {
	first, err := strconv.ParseInt(g.FirstID, 10, 64)
	switch {
	case g.Accounts < 1:
		return fmt.Errorf("accounts: want at least 1, got %d", g.Accounts)
	case len(g.FirstID) != 12 || err != nil || first < 0:
		return fmt.Errorf("first_id: %q is not a 12-digit account id", g.FirstID)
	case first+int64(g.Accounts) > 1e12:
		return fmt.Errorf("accounts: %d accounts from %s run past 999999999999", g.Accounts, g.FirstID)
	case g.Resources < 0 || g.Cache < 0:
		return fmt.Errorf("resources and cache are counts, not negative")
	case !shareOK(g.FaultShare) || !shareOK(g.DriftRate):
		return fmt.Errorf("fault_share and drift_rate are shares between 0 and 1")
	}
	for i, f := range g.Faults {
		if f.Account != "" {
			return fmt.Errorf("faults[%d].account: the accounts are drawn by fault_share", i)
		}
		if err := f.validate(); err != nil {
			return fmt.Errorf("faults[%d]: %w", i, err)
		}
	}
	return nil
}

// index is the position of account id among the generated accounts, or -1.
func (g GeneratedAccounts) index(id string) int {
	if len(id) != 12 {
		return -1
	}
	n, err := strconv.ParseInt(id, 10, 64)
	first, _ := strconv.ParseInt(g.FirstID, 10, 64)
	if err != nil || n < first || n >= first+int64(g.Accounts) {
		return -1
	}
	return int(n - first)
}

// id is the account id of generated account i.
func (g GeneratedAccounts) id(i int) string {
	first, _ := strconv.ParseInt(g.FirstID, 10, 64)
	return fmt.Sprintf("%012d", first+int64(i))
}

// genJoined is when generated accounts joined the organisation: a fixed date, so that
// their content does not depend on when the simulator started.
var genJoined = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// header is what Organizations says of generated account i, without building it: the
// built account has the same id, name, email, status and creation.
func (g GeneratedAccounts) header(i int) *Account {
	id := g.id(i)
	return &Account{ID: id, Name: fmt.Sprintf("org-%05d", i), Email: "aws+" + id + "@org.example",
		Status: "ACTIVE", Root: Root{Created: genJoined.Add(time.Duration(i) * time.Hour)}}
}

// mix hashes the seed and parts into 64 bits: the draws of one account, fault or
// resource, independent of the order anything is built or read in.
func mix(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	_, _ = h.Write(b[:])
	for _, p := range parts {
		_, _ = h.Write([]byte(p))
		_, _ = h.Write([]byte{0})
	}
	// FNV's high bits mix poorly for short inputs: finish with splitmix64's mixer.
	z := h.Sum64() + 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit maps a hash to [0, 1).
func unit(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// faultOf is the fault the calls of account id meet, or nil: a share FaultShare of the
// member accounts, each with one of Faults.
func (g *GeneratedAccounts) faultOf(id, management string) *Fault {
	if g == nil || g.FaultShare == 0 || id == management {
		return nil
	}
	place := g.index(id)
	if place < 0 {
		return nil
	}
	i := strconv.Itoa(place)
	if unit(mix(g.Seed, "fault", i)) >= g.FaultShare {
		return nil
	}
	return &g.Faults[mix(g.Seed, "fault-kind", i)%uint64(len(g.Faults))]
}

// Trust policies and inline policies of generated roles, each shared by many roles as
// Terraform modules share them in real organisations.
var (
	genTrusts = []struct {
		perMille int
		doc      string
	}{
		{300, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
		{200, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ecs-tasks.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
		{200, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`},
		{150, ""}, // the account's own root: filled in per account
		{100, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"arn:aws:iam::aws:saml-provider/okta"},"Action":"sts:AssumeRoleWithSAML"}]}`},
		{50, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Federated":"token.actions.githubusercontent.com"},"Action":"sts:AssumeRoleWithWebIdentity","Condition":{"StringLike":{"token.actions.githubusercontent.com:sub":"repo:acme/*"}}}]}`},
	}
	genInline = []Doc{
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"logs:PutLogEvents","Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::app-data/*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["sqs:SendMessage","sqs:ReceiveMessage","sqs:DeleteMessage"],"Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["kms:Decrypt"],"Resource":"*"}]}`,
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`, // the odd admin role
	}
	genRuleSets = [][]Rule{
		{{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "0.0.0.0/0"}, {Protocol: "tcp", FromPort: 80, ToPort: 80, CIDR: "0.0.0.0/0"}},
		{{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "10.0.0.0/8"}},
		{{Protocol: "tcp", FromPort: 5432, ToPort: 5432, CIDR: "10.0.0.0/8"}},
		{{Protocol: "tcp", FromPort: 6379, ToPort: 6379, CIDR: "10.0.0.0/8"}},
		{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "203.0.113.10/32"}},
		{{Protocol: "tcp", FromPort: 8080, ToPort: 8080, CIDR: "10.0.0.0/8"}, {Protocol: "tcp", FromPort: 8443, ToPort: 8443, CIDR: "10.0.0.0/8"}},
	}
	genOpen = []Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0"}}
)

// genAccount builds generated account i of g in an organisation managed by management,
// ready to serve (prepared) but without drift.
func (s *Sim) genAccount(g *GeneratedAccounts, i int, management string) (*Account, error) {
	h := g.header(i)
	size := g.Resources
	a := LargeAccount{ID: h.ID, Roles: size * 40 / 100, Users: size * 25 / 100, SecurityGroups: size * 30 / 100, Regions: g.Regions,
		Used: s.genUsed}.Build()
	a.Name, a.Email, a.Status, a.Root.Created = h.Name, h.Email, h.Status, h.Root.Created
	// Seeded by the account's place, not its id: an organisation generated with another
	// FirstID (the sweep benchmark draws one per run) holds the same resources, renamed.
	rng := rand.New(rand.NewPCG(g.Seed, mix(g.Seed, "account", strconv.Itoa(i))))
	ownRoot := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + h.ID + `:root"},"Action":"sts:AssumeRole"}]}`
	for _, r := range a.Roles {
		d := rng.IntN(1000)
		for _, t := range genTrusts {
			if d -= t.perMille; d < 0 {
				r.AssumeRolePolicy = Doc(t.doc)
				if t.doc == "" {
					r.AssumeRolePolicy = Doc(ownRoot)
				}
				break
			}
		}
		if len(r.InlinePolicies) == 1 {
			k := rng.IntN(len(genInline) - 1) // the common ones; one role in 100 is an admin
			if rng.IntN(100) == 0 {
				k = len(genInline) - 1
			}
			r.InlinePolicies[0].Document = genInline[k]
		}
	}
	for _, u := range a.Users {
		if u.PasswordEnabled && rng.IntN(10) == 0 {
			u.MFA = false // a few console users without MFA
		}
	}
	for j, sg := range a.SecurityGroups {
		// A copy each: the EC2 handlers change a group's rules in place.
		sg.Ingress = slices.Clone(genRuleSets[rng.IntN(len(genRuleSets))])
		if j%50 == 0 {
			sg.Ingress = append(sg.Ingress, genOpen...)
		}
	}
	if h.ID != management {
		a.Roles = append(a.Roles, &Role{Name: "OrganizationAccountAccessRole", Created: genJoined,
			AssumeRolePolicy: Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` + management + `:root"},"Action":"sts:AssumeRole"}]}`),
			AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"}})
		a.Policies = append(a.Policies, &Policy{Name: "AdministratorAccess", AWSManaged: true, Created: genJoined,
			Document: `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`})
	}
	if err := s.prepareAccount(a); err != nil {
		return nil, fmt.Errorf("generated account %s: %w", h.ID, err)
	}
	return a, nil
}

// AccountCount is how many accounts the partition has: those listed and those generated.
func (a AWS) AccountCount() int {
	n := len(a.Accounts)
	if o := a.Organization; o != nil && o.Generated != nil {
		n += o.Generated.Accounts
	}
	return n
}

// shareOK reports whether x is a share: a number between 0 and 1.
func shareOK(x float64) bool { return x >= 0 && x <= 1 && !math.IsNaN(x) }
