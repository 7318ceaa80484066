package aws_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
)

const acct = "111111111111"

var (
	t0      = time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	oldUse  = time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)
	expired = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
)

const (
	adminDoc  = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}`
	openTrust = `{"Version":"2012-10-17","Statement":[{"Sid":"Anyone","Effect":"Allow","Principal":{"AWS":["*","arn:aws:iam::111111111111:role/ci"]},"Action":"sts:AssumeRole"},{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"},{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole","Condition":{"StringEquals":{"aws:PrincipalOrgID":"o-1"}}}]}`
	keyID     = "AKIA111111ALICE0001"
	keyID2    = "AKIA111111ALICE0002"
	webSG     = "sg-0000000000000001"
	defaultSG = "sg-0000000000000002"
)

func sgARN(id string) string { return "arn:aws:ec2:us-east-1:" + acct + ":security-group/" + id }

// world is one account with a drift for every fix: an unused key, AdministratorAccess
// attached to a user and a group, an inline admin policy, a role anyone may assume, a
// weak password policy, a console password unused for long, an expired server
// certificate, SSH open to the internet, a default group with rules.
func world() *cloudsim.World {
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{
		ID: acct, Regions: []string{"us-east-1"},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true, MaxPasswordAge: 90},
		Users: []*cloudsim.User{{
			Name: "alice", Created: t0, PasswordEnabled: true, PasswordLastUsed: &oldUse, Groups: []string{"admins"},
			AccessKeys: []*cloudsim.AccessKey{
				{ID: keyID, Created: t0, LastUsed: &oldUse, LastUsedService: "s3", LastUsedRegion: "us-east-1"},
				{ID: keyID2, Created: t0},
			},
			AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"},
			InlinePolicies:   []cloudsim.InlinePolicy{{Name: "admin", Document: adminDoc}, {Name: "other", Document: adminDoc}},
		}},
		Groups: []*cloudsim.Group{{Name: "admins", Created: t0, AttachedPolicies: []string{"arn:aws:iam::aws:policy/AdministratorAccess"}}},
		Roles:  []*cloudsim.Role{{Name: "open", Path: "/x/", Created: t0, AssumeRolePolicy: openTrust}},
		Policies: []*cloudsim.Policy{
			{Name: "AdministratorAccess", AWSManaged: true, Document: adminDoc, Created: t0},
		},
		ServerCertificates: []*cloudsim.ServerCertificate{{Name: "legacy", Uploaded: t0, Cert: cloudsim.CertSpec{Subject: "CN=legacy.example",
			NotBefore: t0, NotAfter: expired}}},
		SecurityGroups: []*cloudsim.SecurityGroup{
			{ID: webSG, Name: "web", Region: "us-east-1", VPC: "vpc-1", Description: "web",
				Ingress: []cloudsim.Rule{
					{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"},
					{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "10.0.0.0/8", Description: "office"},
					{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "::/0"},
				}},
			{ID: defaultSG, Name: "default", Region: "us-east-1", VPC: "vpc-1", Description: "default VPC security group",
				Ingress: []cloudsim.Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, SourceGroup: defaultSG}},
				Egress:  []cloudsim.Rule{{Protocol: "-1", FromPort: -1, ToPort: -1, CIDR: "0.0.0.0/0"}}},
		},
	}}}}
}

// env is a simulator serving a world, the sessions the fixes call it through, and an
// SDK configuration for the test's own reads.
type env struct {
	sim      *cloudsim.Sim
	url      string // the simulator's
	sessions *awsapi.Sessions
	cfg      aws.Config
	usage    bool // collect with usage on
}

func start(t *testing.T, w *cloudsim.World) *env {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	base := simtest.AWSConfig(url)
	s, err := awsapi.NewSessions(context.Background(), awsapi.Options{Endpoint: url, AWS: &base,
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0},
		MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := base.Copy()
	cfg.RetryMaxAttempts = 1
	return &env{sim: sim, url: url, sessions: s, cfg: cfg}
}

func (e *env) iam() *iam.Client { return iam.NewFromConfig(e.cfg) }
func (e *env) ec2() *ec2.Client { return ec2.NewFromConfig(e.cfg) }

// collect reads the account with the AWS collector, through a JSON round trip as a
// snapshot file would carry it (numbers become float64).
func (e *env) collect(t *testing.T) map[string]snapshot.Resource {
	t.Helper()
	base := simtest.AWSConfig(e.url)
	c := awscollector.New(awscollector.Config{Endpoint: e.url, AWS: &base, Regions: []string{"us-east-1"},
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond,
		Usage: awscollector.UsageConfig{Enabled: e.usage, PollInterval: time.Millisecond}})
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	out := map[string]snapshot.Resource{}
	for _, r := range sink.Resources {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back snapshot.Resource
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		out[back.UID] = back
	}
	return out
}

// action is the planned action of one target, as a plan would make it.
func action(rem remediators.Remediator, res snapshot.Resource, params map[string]any, tg remediators.Target) remediators.Action {
	return remediators.Action{ID: "act-test", Remediator: rem.Spec().Action, Target: res.UID, ResourceType: res.Type,
		Account: res.Account, Region: res.Region, Part: tg.Part, Params: params, Before: tg.Before, Rollback: rem.Spec().Rollback}
}

// lifecycle is one fix's whole life against the simulator.
type lifecycle struct {
	fix    func(*awsapi.Sessions) remediators.Remediator
	uid    string
	params map[string]any
	part   string
	// parts are every part Targets must find on the collected resource.
	parts []string
	// fixed checks, through the SDK, that the cloud holds the fix; undone that it holds
	// the before-state again (nil for fixes without rollback).
	fixed, undone func(t *testing.T, e *env)
	// world replaces world(); usage collects with usage (targets.aws.usage) on.
	world func() *cloudsim.World
	usage bool

	rem remediators.Remediator // made by fix in run
}

// run drives the fix: Targets on the collected resource → Apply (writes) → the cloud is
// fixed and a new collection finds no target → Apply again is ErrConverged without a
// write → Rollback restores the before-state byte for byte, as collected, or is
// ErrNoRollback → Rollback again writes nothing.
func (lc lifecycle) run(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	w := world
	if lc.world != nil {
		w = lc.world
	}
	e := start(t, w())
	e.usage = lc.usage
	lc.rem = lc.fix(e.sessions)
	res, ok := e.collect(t)[lc.uid]
	if !ok {
		t.Fatalf("%s was not collected", lc.uid)
	}
	ts, err := lc.rem.Targets(res, lc.params)
	if err != nil {
		t.Fatalf("Targets: %v", err)
	}
	var parts []string
	var tg *remediators.Target
	for i := range ts {
		parts = append(parts, ts[i].Part)
		if ts[i].Part == lc.part {
			tg = &ts[i]
		}
		if !json.Valid(ts[i].Before) {
			t.Errorf("part %s: before-state is not JSON: %s", ts[i].Part, ts[i].Before)
		}
	}
	if !slices.Equal(parts, lc.parts) || tg == nil {
		t.Fatalf("Targets parts = %q, want %q", parts, lc.parts)
	}
	a := action(lc.rem, res, lc.params, *tg)

	e.sim.ResetCalls()
	if err := lc.rem.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if e.sim.WriteCount() == 0 {
		t.Fatal("Apply made no write call")
	}
	lc.fixed(t, e)
	if again, ok := e.collect(t)[lc.uid]; ok {
		ts, err := lc.rem.Targets(again, lc.params)
		if err != nil {
			t.Fatalf("Targets after Apply: %v", err)
		}
		for _, x := range ts {
			if x.Part == lc.part {
				t.Errorf("after Apply the collected resource still has part %s: %s", x.Part, x.Before)
			}
		}
	}

	e.sim.ResetCalls()
	if err := lc.rem.Apply(ctx, a); !errors.Is(err, remediators.ErrConverged) {
		t.Errorf("second Apply: %v, want ErrConverged", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Apply wrote %v, want no write", w)
	}

	err = lc.rem.Rollback(ctx, a)
	if !lc.rem.Spec().Rollback.Possible {
		if !errors.Is(err, remediators.ErrNoRollback) {
			t.Errorf("Rollback: %v, want ErrNoRollback", err)
		}
		if lc.rem.Spec().Rollback.Reason == "" {
			t.Error("Spec().Rollback gives no reason")
		}
		return
	}
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	lc.undone(t, e)
	back, ok := e.collect(t)[lc.uid]
	if !ok {
		t.Fatalf("%s is gone after Rollback", lc.uid)
	}
	ts, err = lc.rem.Targets(back, lc.params)
	if err != nil {
		t.Fatalf("Targets after Rollback: %v", err)
	}
	restored := false
	for _, x := range ts {
		if x.Part == lc.part {
			restored = true
			if string(x.Before) != string(tg.Before) {
				t.Errorf("after Rollback part %s is\n%s\nwant the before-state\n%s", x.Part, x.Before, tg.Before)
			}
		}
	}
	if !restored {
		t.Errorf("after Rollback part %s is not back", lc.part)
	}
	e.sim.ResetCalls()
	if err := lc.rem.Rollback(ctx, a); err != nil {
		t.Errorf("second Rollback: %v", err)
	}
	if w := e.sim.Writes(); len(w) != 0 {
		t.Errorf("second Rollback wrote %v, want no write", w)
	}
}
