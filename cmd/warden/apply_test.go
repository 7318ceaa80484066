package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators/builtin"
)

const cliAccount = "111111111111"

// cliWorld is one account with a weak password policy (a low-risk fix), and SSH open to
// the internet on one group and an unused access key (medium-risk fixes).
func cliWorld() *cloudsim.World {
	t0 := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	lastUse := time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC)
	return &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{
		ID: cliAccount, Regions: []string{"us-east-1"},
		PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true, MaxPasswordAge: 90},
		Users: []*cloudsim.User{{Name: "dave", Created: t0, AccessKeys: []*cloudsim.AccessKey{
			{ID: "AKIA111111DAVE00001", Created: t0, LastUsed: &lastUse, LastUsedService: "s3", LastUsedRegion: "us-east-1"}}}},
		SecurityGroups: []*cloudsim.SecurityGroup{{ID: "sg-0000000000000ssh1", Name: "web", Region: "us-east-1", VPC: "vpc-1", Description: "web",
			Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"}}}},
	}}}}
}

// simEnv is a simulator serving a world, and the files the CLI runs with: a config whose
// targets: name the simulator and whose gates: list bob and carol as approvers, and a
// SQLite database. The actor is alice unless a test sets $WARDEN_ACTOR.
type simEnv struct {
	sim *cloudsim.Sim
	url string
	sdk aws.Config
	dir string
	cfg string
	db  string
}

func startSimEnv(t *testing.T, w *cloudsim.World) *simEnv {
	t.Helper()
	sim, url := simtest.Start(t, w, cloudsim.Options{})
	dir := t.TempDir()
	// The standard credential chain, and nothing of this machine's own AWS setup.
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "", "AWS_REGION": "us-east-1",
		"AWS_PROFILE": "", "AWS_CONFIG_FILE": filepath.Join(dir, "no-aws-config"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "no-aws-credentials"),
		"AWS_ENDPOINT_URL": "", "AWS_EC2_METADATA_DISABLED": "true",
		audit.ActorEnv: "alice", auditKeyEnv: "", "XDG_STATE_HOME": filepath.Join(dir, "state"),
	} {
		t.Setenv(k, v)
	}
	e := &simEnv{sim: sim, url: url, dir: dir, db: filepath.Join(dir, "warden.db")}
	e.cfg = write(t, dir, "warden.yaml", `gates:
  approvers: [bob, carol]
  unchecked_names: true
targets:
  aws:
    regions: [us-east-1]
    endpoint: `+url+`
    rate_limits: {iam: 0, sts: 0, ec2: 0, acm: 0, organizations: 0}
`)
	e.sdk = simtest.AWSConfig(url)
	e.sdk.RetryMaxAttempts = 1
	return e
}

// warden runs the CLI in-process with the environment's config and database.
func (e *simEnv) warden(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return warden(t, "", append(args, "--config", e.cfg, "--db", e.db)...)
}

// plan plans the simulated world into a file and returns it, with the plan as read back.
func (e *simEnv) plan(t *testing.T) (string, *remediate.Plan) {
	t.Helper()
	path := filepath.Join(e.dir, "plan.json")
	code, out, stderr := e.warden(t, "plan", "--out", path)
	if code != 0 || !strings.Contains(out, "saved to "+path) {
		t.Fatalf("plan --out: exit %d\n%s%s", code, out, stderr)
	}
	p, err := remediate.ReadPlan(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, p
}

// byRisk splits a plan's action ids by risk.
func byRisk(p *remediate.Plan) map[findings.Risk][]string {
	out := map[findings.Risk][]string{}
	for _, a := range p.Actions {
		out[a.Risk] = append(out[a.Risk], a.ID)
	}
	return out
}

// applyJSON runs apply --format json and decodes its result.
func (e *simEnv) applyJSON(t *testing.T, args ...string) (int, *remediate.Result, string) {
	t.Helper()
	code, out, stderr := e.warden(t, append([]string{"apply", "--format", "json"}, args...)...)
	var res remediate.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("apply %v: exit %d, output is not a result: %v\n%s%s", args, code, err, out, stderr)
	}
	return code, &res, stderr
}

func itemsByAction(res *remediate.Result) map[string]remediate.Item {
	out := map[string]remediate.Item{}
	for _, it := range res.Items {
		out[it.Action] = it
	}
	return out
}

// passwordMinLength reads the account's password policy through the SDK.
func (e *simEnv) passwordMinLength(t *testing.T) int32 {
	t.Helper()
	out, err := iam.NewFromConfig(e.sdk).GetAccountPasswordPolicy(context.Background(), &iam.GetAccountPasswordPolicyInput{})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToInt32(out.PasswordPolicy.MinimumPasswordLength)
}

// sshOpen reports whether a group still lets the internet in on port 22, read through
// the SDK.
func (e *simEnv) sshOpen(t *testing.T, groupID string) bool {
	t.Helper()
	out, err := ec2.NewFromConfig(e.sdk).DescribeSecurityGroups(context.Background(), &ec2.DescribeSecurityGroupsInput{GroupIds: []string{groupID}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.SecurityGroups[0].IpPermissions {
		if aws.ToInt32(p.FromPort) > 22 || aws.ToInt32(p.ToPort) < 22 {
			continue
		}
		for _, r := range p.IpRanges {
			if aws.ToString(r.CidrIp) == "0.0.0.0/0" {
				return true
			}
		}
	}
	return false
}

// keyActive reads the access key's status through the SDK.
func (e *simEnv) keyActive(t *testing.T, user, keyID string) bool {
	t.Helper()
	out, err := iam.NewFromConfig(e.sdk).ListAccessKeys(context.Background(), &iam.ListAccessKeysInput{UserName: aws.String(user)})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range out.AccessKeyMetadata {
		if aws.ToString(k.AccessKeyId) == keyID {
			return k.Status == "Active"
		}
	}
	t.Fatalf("no access key %s for %s", keyID, user)
	return false
}

// adminWrites reads the simulator's write counters from its admin endpoint, as a test
// outside the process would.
func (e *simEnv) adminWrites(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(e.url + "/_sim/writes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/_sim/writes: %d %v\n%s", resp.StatusCode, err, b)
	}
	var w map[string]int
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("/_sim/writes: %v\n%s", err, b)
	}
	return w
}

// actionStates lists the recorded actions through warden actions list --format json.
func (e *simEnv) actionStates(t *testing.T) map[string]remediate.State {
	t.Helper()
	code, out, stderr := e.warden(t, "actions", "list", "--format", "json")
	if code != 0 {
		t.Fatalf("actions list: exit %d\n%s", code, stderr)
	}
	var rs []remediate.Record
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("actions list --format json: %v\n%s", err, out)
	}
	states := map[string]remediate.State{}
	for _, r := range rs {
		if len(r.History) == 0 || r.History[len(r.History)-1].State != r.State {
			t.Errorf("action %s is %s, its history %+v does not end there", r.ID, r.State, r.History)
		}
		states[r.ID] = r.State
	}
	return states
}

func TestPlanCLI_snapshotJSON(t *testing.T) {
	code, out, stderr := warden(t, "", "plan", "--snapshot", acme, "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var p struct {
		Hash    string `json:"hash"`
		Actions []struct {
			ID         string          `json:"id"`
			Remediator string          `json:"remediator"`
			Target     string          `json:"target"`
			Risk       string          `json:"risk"`
			Policy     string          `json:"policy"`
			Hash       string          `json:"hash"`
			Key        string          `json:"key"`
			Before     json.RawMessage `json:"before"`
			Approvals  struct {
				Verdict string `json:"verdict"`
				Needed  int    `json:"needed"`
			} `json:"approvals"`
		} `json:"actions"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	reg, err := builtin.Registry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	catalog := reg.Catalog()
	if p.Hash == "" || len(p.Actions) < 5 {
		t.Fatalf("plan hash %q, %d actions: want a hash and the acme fixes", p.Hash, len(p.Actions))
	}
	ids := map[string]bool{}
	risks := map[string]int{}
	for _, a := range p.Actions {
		if a.ID == "" || ids[a.ID] {
			t.Errorf("action id %q is empty or repeated", a.ID)
		}
		ids[a.ID] = true
		if _, ok := catalog[a.Remediator]; !ok {
			t.Errorf("action %s: remediator %q is not in the registry", a.ID, a.Remediator)
		}
		r, err := findings.ParseRisk(a.Risk)
		if err != nil || r == findings.RiskNone {
			t.Errorf("action %s: risk %q: %v", a.ID, a.Risk, err)
		}
		risks[a.Risk]++
		if a.Target == "" || a.Policy == "" || a.Hash == "" || a.Key == "" || len(a.Before) == 0 {
			t.Errorf("action %s lacks a target, policy, hash, key or before-state: %+v", a.ID, a)
		}
		// The default gates: low runs unattended, anything above waits for approval.
		wantVerdict := "approval"
		if a.Risk == "low" {
			wantVerdict = "auto"
		}
		if a.Approvals.Verdict != wantVerdict {
			t.Errorf("action %s of risk %s: verdict %q, want %q", a.ID, a.Risk, a.Approvals.Verdict, wantVerdict)
		}
	}
	if risks["low"] == 0 || risks["medium"]+risks["high"]+risks["critical"] == 0 {
		t.Errorf("risks %v: want low fixes and fixes that need approval", risks)
	}

	// The same plan in a table names every action.
	// (Its hash differs: a plan's hash covers its creation time.)
	code, table, _ := warden(t, "", "plan", "--snapshot", acme)
	if code != 0 || !strings.HasPrefix(table, "plan ") || !strings.Contains(table, fmt.Sprintf(": %d actions, ", len(p.Actions))) {
		t.Fatalf("plan table: exit %d\n%.300s", code, table)
	}
	for id := range ids {
		if !strings.Contains(table, id) {
			t.Errorf("the table does not list action %s", id)
		}
	}
}

func TestPlanCLI_badFormat(t *testing.T) {
	code, _, stderr := warden(t, "", "plan", "--snapshot", acme, "--format", "xml")
	if code != exitError || !strings.Contains(stderr, `want table or json, not "xml"`) {
		t.Errorf("exit %d, %s", code, stderr)
	}
}

// Without --confirm, apply says what it would do and writes nothing, to the cloud or to
// the database.
func TestApplyCLI_dryRunWritesNothing(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	if len(p.Actions) < 3 {
		t.Fatalf("plan has %d actions, want the password policy, the SSH rule and the key", len(p.Actions))
	}
	e.sim.ResetCalls()
	code, out, stderr := e.warden(t, "apply", planFile)
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s%s", code, out, stderr)
	}
	if !strings.Contains(out, "dry run: nothing is changed") {
		t.Errorf("the dry run does not say so:\n%s", out)
	}
	for _, a := range p.Actions {
		if !strings.Contains(out, a.ID) {
			t.Errorf("the dry run does not say what it would do with %s:\n%s", a.ID, out)
		}
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Errorf("the dry run made %d writes: %v", n, e.sim.Writes())
	}
	if w := e.adminWrites(t); len(w) != 0 {
		t.Errorf("/_sim/writes after the dry run: %v", w)
	}
	if e.passwordMinLength(t) != 8 || !e.sshOpen(t, "sg-0000000000000ssh1") || !e.keyActive(t, "dave", "AKIA111111DAVE00001") {
		t.Error("the world changed in a dry run")
	}
	if states := e.actionStates(t); len(states) != 0 {
		t.Errorf("the dry run recorded actions: %v", states)
	}

	// As JSON, the dry run is marked so and its items are planned.
	code, res, stderr := e.applyJSON(t, planFile)
	if code != 0 || !res.DryRun || res.Plan != p.Hash || len(res.Items) != len(p.Actions) {
		t.Fatalf("dry run as JSON: exit %d, %+v\n%s", code, res, stderr)
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Errorf("the JSON dry run made %d writes", n)
	}
}

// With --confirm the low-risk fix runs and is verified; the medium ones wait for
// approval, are listed, and run once another approver approved them.
func TestApplyCLI_confirmAppliesLowAndLeavesMediumPending(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	risks := byRisk(p)
	low, medium := risks[findings.RiskLow], risks[findings.RiskMedium]
	if len(low) == 0 || len(medium) == 0 {
		t.Fatalf("plan risks %v: want low and medium actions", risks)
	}

	e.sim.ResetCalls()
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	if code != 0 || res.DryRun {
		t.Fatalf("apply --confirm: exit %d, dry run %v\n%s", code, res.DryRun, stderr)
	}
	items := itemsByAction(res)
	// The world's two password-policy findings are fixed by one call: the first action
	// writes, the other finds the policy converged.
	wrote := 0
	for _, id := range low {
		it := items[id]
		if it.State != remediate.StateVerified {
			t.Errorf("low-risk %s: %+v, want verified", id, it)
		}
		if it.Wrote {
			wrote++
		}
	}
	if wrote == 0 {
		t.Errorf("no low-risk action wrote: %+v", res.Items)
	}
	requests := map[string]string{}
	for _, id := range medium {
		it := items[id]
		if it.State != remediate.StatePending || it.Request == "" || it.Wrote {
			t.Errorf("medium-risk %s: %+v, want pending approval with a request", id, it)
		}
		requests[id] = it.Request
	}
	// The world as the cloud has it: the policy fixed, the rule and the key untouched.
	if n := e.passwordMinLength(t); n < 14 {
		t.Errorf("minimum password length %d after the fix, want at least 14", n)
	}
	if !e.sshOpen(t, "sg-0000000000000ssh1") || !e.keyActive(t, "dave", "AKIA111111DAVE00001") {
		t.Error("a fix waiting for approval was applied")
	}
	if w := e.sim.Writes(); len(w) == 0 || w["ec2:RevokeSecurityGroupIngress"] != 0 || w["iam:UpdateAccessKey"] != 0 {
		t.Errorf("writes of the first apply: %v", w)
	}

	code, out, stderr := e.warden(t, "approvals", "list")
	if code != 0 {
		t.Fatalf("approvals list: exit %d\n%s", code, stderr)
	}
	for id, req := range requests {
		if !strings.Contains(out, req) {
			t.Errorf("approvals list does not show request %s of %s:\n%s", req, id, out)
		}
	}
	states := e.actionStates(t)
	for _, id := range low {
		if states[id] != remediate.StateVerified {
			t.Errorf("actions list: %s is %s, want verified", id, states[id])
		}
	}
	for _, id := range medium {
		if states[id] != remediate.StatePending {
			t.Errorf("actions list: %s is %s, want pending_approval", id, states[id])
		}
	}

	// The table says what to run for each pending fix.
	code, out, _ = e.warden(t, "apply", planFile, "--confirm")
	if code != 0 {
		t.Fatalf("apply again: exit %d\n%s", code, out)
	}
	for _, req := range requests {
		if !strings.Contains(out, "warden approve "+req) {
			t.Errorf("apply table does not say warden approve %s:\n%s", req, out)
		}
	}

	// alice requested them: she may not approve; bob may, and the next apply runs them.
	for _, req := range requests {
		if code, _, stderr := e.warden(t, "approve", req); code != exitError || !strings.Contains(stderr, "requester") {
			t.Errorf("alice approving her own request: exit %d, %s", code, stderr)
		}
	}
	t.Setenv(audit.ActorEnv, "bob")
	for _, req := range requests {
		if code, out, stderr := e.warden(t, "approve", req, "--reason", "CHG-7"); code != 0 {
			t.Fatalf("bob approves %s: exit %d\n%s%s", req, code, out, stderr)
		}
	}
	t.Setenv(audit.ActorEnv, "alice")
	e.sim.ResetCalls()
	code, res, stderr = e.applyJSON(t, planFile, "--confirm")
	if code != 0 {
		t.Fatalf("apply after approval: exit %d\n%s", code, stderr)
	}
	items = itemsByAction(res)
	for _, id := range medium {
		if it := items[id]; it.State != remediate.StateVerified || !it.Wrote {
			t.Errorf("approved %s: %+v, want verified", id, it)
		}
	}
	if e.sshOpen(t, "sg-0000000000000ssh1") || e.keyActive(t, "dave", "AKIA111111DAVE00001") {
		t.Error("the approved fixes are not in the world")
	}
	if w := e.sim.Writes(); w["iam:UpdateAccountPasswordPolicy"] != 0 {
		t.Errorf("the low-risk fix was made again: %v", w)
	}
	states = e.actionStates(t)
	for _, a := range p.Actions {
		if states[a.ID] != remediate.StateVerified {
			t.Errorf("actions list at the end: %s is %s, want verified", a.ID, states[a.ID])
		}
	}
}

// warden pause makes apply --confirm refuse, writing nothing, until warden resume.
func TestApplyCLI_pauseRefusesUntilResume(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	if code, _, stderr := e.warden(t, "pause"); code != exitError || !strings.Contains(stderr, "a reason is required") {
		t.Errorf("pause without a reason: exit %d, %s", code, stderr)
	}
	if code, out, stderr := e.warden(t, "pause", "--reason", "incident 42"); code != 0 || !strings.Contains(out, "remediation paused") {
		t.Fatalf("pause: exit %d\n%s%s", code, out, stderr)
	}
	e.sim.ResetCalls()
	code, out, stderr := e.warden(t, "apply", planFile, "--confirm")
	if code != exitError {
		t.Errorf("apply --confirm while paused: exit %d, want %d\n%s", code, exitError, out)
	}
	for _, want := range []string{"remediation is paused", "alice", "incident 42", "warden resume"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the refusal %q does not say %q", stderr, want)
		}
	}
	if n := e.sim.WriteCount(); n != 0 {
		t.Errorf("apply while paused made %d writes: %v", n, e.sim.Writes())
	}
	if e.passwordMinLength(t) != 8 {
		t.Error("the password policy was fixed while paused")
	}
	if states := e.actionStates(t); len(states) != 0 {
		t.Errorf("apply while paused recorded actions: %v", states)
	}

	if code, out, stderr := e.warden(t, "resume"); code != 0 || !strings.Contains(out, "remediation resumed") {
		t.Fatalf("resume: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := e.warden(t, "resume"); code != exitError || !strings.Contains(stderr, "not paused") {
		t.Errorf("resume when not paused: exit %d, %s", code, stderr)
	}
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	if code != 0 {
		t.Fatalf("apply after resume: exit %d\n%s", code, stderr)
	}
	var verified []string
	for _, it := range res.Items {
		if it.State == remediate.StateVerified {
			verified = append(verified, it.Action)
		}
	}
	low := byRisk(p)[findings.RiskLow]
	slices.Sort(low)
	slices.Sort(verified)
	if len(low) == 0 || !slices.Equal(verified, low) {
		t.Errorf("after resume verified %v, want the low-risk %v", verified, low)
	}
	if n := e.passwordMinLength(t); n < 14 {
		t.Errorf("minimum password length %d after resume and apply, want at least 14", n)
	}
}

func TestApplyCLI_badPlanFile(t *testing.T) {
	dir := t.TempDir()
	bad := write(t, dir, "plan.json", `{"version": 1, "hash": "x", "actions": [], "extra": true}`)
	tests := []struct {
		name, path, inErr string
	}{
		{"missing", filepath.Join(dir, "nope.json"), "read plan"},
		{"unknown field", bad, `unknown field "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := warden(t, "", "apply", tt.path, "--db", filepath.Join(dir, "w.db"))
			if code != exitError || !strings.Contains(stderr, tt.inErr) {
				t.Errorf("exit %d, %s; want 2 and %q", code, stderr, tt.inErr)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.json")); err == nil {
		t.Error("apply created the missing plan file")
	}
}

// Actions the blast-radius cap defers wait for the next run: apply says so and exits 0,
// and the next run applies them.
func TestApplyCLI_capDeferralIsNoError(t *testing.T) {
	e := startSimEnv(t, cliWorld())
	planFile, p := e.plan(t)
	if low := byRisk(p)[findings.RiskLow]; len(low) < 2 {
		t.Fatalf("plan: %d low-risk actions, want two to defer one", len(low))
	}
	code, out, stderr := e.warden(t, "apply", planFile, "--confirm", "--max-actions", "1")
	if code != 0 || !strings.Contains(out, "deferred: blast-radius cap: 3 actions deferred") || strings.Contains(out, "stopped:") {
		t.Fatalf("apply over the cap: exit %d, want 0 and the deferral said\n%s%s", code, out, stderr)
	}
	code, res, stderr := e.applyJSON(t, planFile, "--confirm")
	if code != 0 || res.Failed() != 0 || res.Stopped != "" || res.Deferred != "" {
		t.Fatalf("the next run: exit %d, %d failed, stopped %q\n%s", code, res.Failed(), res.Stopped, stderr)
	}
	for _, id := range byRisk(p)[findings.RiskLow] {
		if st := e.actionStates(t)[id]; st != remediate.StateVerified {
			t.Errorf("%s is %s after two runs, want verified", id, st)
		}
	}
	if n := e.passwordMinLength(t); n < 14 {
		t.Errorf("minimum password length %d in the simulator, want at least 14", n)
	}
}
