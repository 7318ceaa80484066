// Package remediatetest runs warden's remediation against the simulator for tests: the
// simulator on a loopback port, the official AWS SDK clients through warden's shared
// sessions, the built-in pack checked against the registry, and a store with its audit
// log and approval gate. Tests of remediate, serve and the approval channels share it.
package remediatetest

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// Account is the simulated account of World.
const Account = "111111111111"

// T0 is when World's user and key were created.
var T0 = time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)

// World is one account with a password policy too short and remembering no passwords
// (one low-risk fix: its character classes and expiry are fine), SSH open to the
// internet on openGroups security groups, and an unused, old access key (medium- and
// high-risk fixes).
func World(openGroups int) *cloudsim.World {
	oldUse := time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)
	a := &cloudsim.Account{
		ID: Account, Regions: []string{"us-east-1"},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true, RequireSymbols: true,
			RequireUppercaseCharacters: true, RequireLowercaseCharacters: true, MaxPasswordAge: 90},
		Users: []*cloudsim.User{{Name: "alice", Created: T0, AccessKeys: []*cloudsim.AccessKey{
			{ID: "AKIA111111ALICE0001", Created: T0, LastUsed: &oldUse, LastUsedService: "s3", LastUsedRegion: "us-east-1"}}}},
	}
	for i := range openGroups {
		id := "sg-00000000000000" + string(rune('a'+i/10)) + string(rune('0'+i%10))
		a.SecurityGroups = append(a.SecurityGroups, &cloudsim.SecurityGroup{ID: id, Name: "web-" + id, Region: "us-east-1", VPC: "vpc-1",
			Description: "web", Ingress: []cloudsim.Rule{
				{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"},
				{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "10.0.0.0/8", Description: "office"},
			}})
	}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{a}}}
}

// Options vary an Env.
type Options struct {
	// RateLimit paces warden's clients at this many calls per second per service (0:
	// unpaced).
	RateLimit float64
	// Deps are passed to builtin.New (Sessions is filled in).
	Deps builtin.Deps
	// Usage makes the reader collect each principal's usage (IAM Access Advisor).
	Usage bool
}

// Env is one test's simulator, clients, pack, store, audit log and gate.
type Env struct {
	Sim      *cloudsim.Sim
	URL      string // the simulator's base URL
	SDK      aws.Config
	Sessions *awsapi.Sessions
	Reader   *awscollector.Collector
	Registry *remediators.Registry
	Engine   *engine.Engine
	Store    *store.Store
	Log      *audit.Log
	Gates    gates.Config
	Gate     *gates.Gate
	Accounts []string
	DSN      string

	mu  sync.Mutex
	now func() time.Time
}

// Now is the Env's clock: the machines, the log and the gate read it.
func (e *Env) Now() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now()
}

// SetNow replaces the clock (time.Now by default).
func (e *Env) SetNow(now func() time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = now
}

// Start starts an Env on the database dsn (storetest.Backends).
func Start(t testing.TB, dsn string, w *cloudsim.World, gcfg gates.Config, opts Options) *Env {
	t.Helper()
	ctx := context.Background()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	base := simtest.AWSConfig(url)
	limit := opts.RateLimit
	sessions, err := awsapi.NewSessions(ctx, awsapi.Options{Endpoint: url, AWS: &base,
		RateLimits:  map[string]float64{"iam": limit, "sts": limit, "ec2": limit, "acm": limit, "organizations": limit, "secretsmanager": limit},
		MaxAttempts: 2, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	deps := opts.Deps
	deps.AWS = sessions
	reg, err := builtin.New(deps)
	if err != nil {
		t.Fatal(err)
	}
	eng := Engine(t, reg, nil)
	st := storetest.Open(t, dsn)
	e := &Env{Sim: sim, URL: url, Sessions: sessions, Registry: reg, Engine: eng, Store: st, Gates: gcfg, now: time.Now,
		Accounts: []string{Account}, DSN: dsn}
	for _, a := range w.AWS.Accounts {
		if a.ID != Account {
			e.Accounts = append(e.Accounts, a.ID)
		}
	}
	e.SDK = base.Copy()
	e.SDK.RetryMaxAttempts = 1
	e.Reader = awscollector.New(awscollector.Config{Sessions: sessions, Endpoint: url, AWS: &base, Regions: []string{"us-east-1"},
		BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond,
		Usage: awscollector.UsageConfig{Enabled: opts.Usage, PollInterval: time.Millisecond}})
	e.Log = audit.New(st, audit.Options{Now: e.Now})
	e.Gate = gates.New(st, e.Log, gcfg, e.Now)
	return e
}

// Engine is the built-in policy pack with settings, its remediation checked against
// reg's catalog as warden checks it.
func Engine(t testing.TB, reg *remediators.Registry, settings map[string]any) *engine.Engine {
	t.Helper()
	catalog := map[string][]engine.ActionParam{}
	for name, ps := range reg.Catalog() {
		catalog[name] = nil
		for _, p := range ps {
			catalog[name] = append(catalog[name], engine.ActionParam{Name: p.Name, Required: p.Required})
		}
	}
	eng, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}},
		Actions: catalog, Settings: settings})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// Plan collects the account, evaluates it and plans its findings, as actor.
func (e *Env) Plan(t testing.TB, actor string) *remediate.Plan {
	t.Helper()
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := e.Reader.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	now := e.Now().UTC()
	h := snapshot.Header{Version: 1, CollectedAt: now, Accounts: e.Accounts, Scopes: sink.Scopes}
	res, err := e.Engine.Evaluate(ctx, h, now, sink.Resources)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.EvalErrors) > 0 {
		t.Fatalf("eval errors: %v", res.EvalErrors)
	}
	byUID := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		byUID[r.UID] = r
	}
	p, err := remediate.NewPlan(remediate.PlanInput{Header: h, Name: "test", Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { r, ok := byUID[uid]; return r, ok },
		Complete: func(string) bool { return true }, Registry: e.Registry, Gates: e.Gates, Actor: actor, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Machine is a remediation machine acting as actor within l.
func (e *Env) Machine(actor string, l remediate.Limits) *remediate.Machine {
	return remediate.New(remediate.Options{Store: e.Store, Log: e.Log, Gate: e.Gate, Gates: e.Gates, Registry: e.Registry,
		Observer: remediate.Readers{e.Reader}, Engine: e.Engine, Actor: actor, Limits: l, Now: e.Now})
}

// Only keeps the first n actions of remediator in p.
func Only(p *remediate.Plan, remediator string, n int) *remediate.Plan {
	i := 0
	return p.Only(func(a remediate.PlannedAction) bool {
		if a.Remediator != remediator || i >= n {
			return false
		}
		i++
		return true
	})
}

// ItemOf returns the item of action id in res.
func ItemOf(t testing.TB, res *remediate.Result, id string) remediate.Item {
	t.Helper()
	for _, it := range res.Items {
		if it.Action == id {
			return it
		}
	}
	t.Fatalf("no item for %s in %+v", id, res.Items)
	return remediate.Item{}
}

// SSHOpen reports whether the group still lets 0.0.0.0/0 in on port 22, read through
// the SDK, and that rule's description.
func (e *Env) SSHOpen(t testing.TB, groupARN string) (bool, string) {
	t.Helper()
	id := groupARN[strings.LastIndex(groupARN, "/")+1:]
	out, err := ec2.NewFromConfig(e.SDK).DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{GroupIds: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.SecurityGroups[0].IpPermissions {
		if aws.ToInt32(p.FromPort) != 22 {
			continue
		}
		for _, r := range p.IpRanges {
			if aws.ToString(r.CidrIp) == "0.0.0.0/0" {
				return true, aws.ToString(r.Description)
			}
		}
	}
	return false, ""
}

// VerifyAudit signs a checkpoint and verifies the log against it.
func (e *Env) VerifyAudit(t testing.TB) {
	t.Helper()
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := audit.New(e.Store, audit.Options{Signer: signer})
	if _, err := log.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Verify(context.Background(), verifier); err != nil {
		t.Fatalf("audit verify: %v", err)
	}
}
