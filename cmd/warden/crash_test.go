package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
)

// crashWorld is one account with n security groups open to SSH from the internet.
func crashWorld(n int) *cloudsim.World {
	a := &cloudsim.Account{ID: "111111111111", Regions: []string{"us-east-1"}}
	for i := range n {
		id := fmt.Sprintf("sg-%017d", i+1)
		a.SecurityGroups = append(a.SecurityGroups, &cloudsim.SecurityGroup{ID: id, Name: "web-" + id, Region: "us-east-1", VPC: "vpc-1",
			Description: "web", Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"}}})
	}
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{a}}}
}

// wardenChild runs warden as a child process (TestHelperProcess) against the simulator.
func wardenChild(simURL string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "WARDEN_HELPER_PROCESS=1", "AWS_ENDPOINT_URL="+simURL, "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=secret", "WARDEN_ACTOR=alice")
	return cmd
}

// childRun is a simulator and what the warden child processes of one test share against
// it: a config file, a SQLite database and a plan file.
type childRun struct {
	sim      *cloudsim.Sim
	url      string // the simulator's
	dir      string
	cfg, db  string
	planFile string
}

// startChildRun serves w and writes config as the run's warden.yaml.
func startChildRun(t *testing.T, w *cloudsim.World, config string) *childRun {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	dir := t.TempDir()
	r := &childRun{sim: sim, url: url, dir: dir, cfg: filepath.Join(dir, "warden.yaml"), db: filepath.Join(dir, "w.db"),
		planFile: filepath.Join(dir, "plan.json")}
	if err := os.WriteFile(r.cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// args are args followed by the flags every command of the run takes: the simulated AWS
// account, the config and the database.
func (r *childRun) args(args ...string) []string {
	return slices.Concat(args, []string{"--aws", "--region", "us-east-1", "--config", r.cfg, "--db", r.db})
}

// warden is warden as a child process with args and the run's flags.
func (r *childRun) warden(args ...string) *exec.Cmd { return wardenChild(r.url, r.args(args...)...) }

// plan plans the world into the run's plan file, and returns the plan as read back.
func (r *childRun) plan(t *testing.T) *remediate.Plan {
	t.Helper()
	if out, err := r.warden("plan", "--out", r.planFile).CombinedOutput(); err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	p, err := remediate.ReadPlan(r.planFile)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A SIGKILL in the middle of apply loses nothing and repeats nothing: the next apply
// resolves what the killed one left, and every rule is revoked by exactly one call.
func TestApply_sigkillMidRunAppliesEachActionOnce(t *testing.T) {
	const groups = 12
	cr := startChildRun(t, crashWorld(groups), "gates:\n  auto: [low, medium]\n")
	sim := cr.sim
	actions := len(cr.plan(t).Actions) // the open SSH rules, and the default group's rules
	if actions < groups {
		t.Fatalf("plan has %d actions, want at least %d", actions, groups)
	}

	// Slow calls, so that the kill lands mid-run: between an intent and its outcome, or
	// between a call and its verification.
	sim.SetLatency(40 * time.Millisecond)
	sim.ResetCalls()
	child := cr.warden("apply", cr.planFile, "--confirm", "--max-per-account", "100")
	var out strings.Builder
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = child.Wait(); close(exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for sim.Writes()["ec2:RevokeSecurityGroupIngress"] < 3 {
		select {
		case <-exited:
			t.Fatalf("apply ended before the kill:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			_ = child.Process.Kill()
			t.Fatalf("apply made no progress:\n%s", out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(30 * time.Millisecond) // mid-call or mid-verification
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-exited
	before := sim.Writes()["ec2:RevokeSecurityGroupIngress"]
	if before >= actions {
		t.Fatalf("the kill came too late: %d of %d revokes already made", before, actions)
	}

	sim.SetLatency(0)
	again, err := cr.warden("apply", cr.planFile, "--confirm", "--max-per-account", "100", "--format", "json").CombinedOutput()
	if err != nil {
		t.Fatalf("apply after the kill: %v\n%s", err, again)
	}
	var second remediate.Result
	if err := json.Unmarshal(again[bytes.IndexByte(again, '{'):], &second); err != nil {
		t.Fatalf("apply --format json: %v\n%s", err, again)
	}
	if second.Recovered == 0 {
		t.Errorf("the second apply found no interrupted action: the kill did not land between an intent and its outcome\n%s", again)
	}
	// Every action is one write (a revoke; the password policy): exactly one each.
	if writes := sim.WriteCount(); writes != actions {
		t.Errorf("%d write calls in all, want exactly %d (one per action); killed after %d revokes\nwrites %v\nsecond apply:\n%s",
			writes, actions, before, sim.Writes(), again)
	}
	var open int
	sim.Do(func(w *cloudsim.World) {
		for _, g := range w.AWS.Accounts[0].SecurityGroups {
			for _, r := range g.Ingress {
				if r.CIDR == "0.0.0.0/0" {
					open++
				}
			}
		}
	})
	if open != 0 {
		t.Errorf("%d rules still open to the internet in the simulator", open)
	}

	ctx := context.Background()
	st, err := store.OpenExisting(ctx, cr.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{})})
	rs, err := m.Actions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != actions {
		t.Fatalf("%d actions recorded, want %d", len(rs), actions)
	}
	for _, r := range rs {
		if r.State != remediate.StateVerified {
			t.Errorf("action %s is %s (%s), want verified", r.ID, r.State, r.Detail)
		}
	}
	t.Logf("killed after %d of %d revokes", before, actions)
}
