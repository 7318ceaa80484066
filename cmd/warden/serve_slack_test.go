package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/slackgate/slackgatetest"
)

// Slack users of the serve test: alice requests the fix from the CLI and is linked to her
// Slack user; bob is in slack.approvers; dave is in the approver group; mallory is nobody.
const (
	sAlice   = "U0AAAAAAA"
	sBob     = "U0BBBBBBB"
	sDave    = "U0DDDDDDD"
	sMallory = "U0EEEEEEE"
	sGroup   = "S0GROUP01"
	sChannel = "C0123456789"

	sBotToken = "xoxb-1111-2222-servetesttoken"
	sSecret   = "8f742231b10e8888abcd99yyyzzz85a5"
)

// TestServe_slackQuorumAppliesThroughTheProcess drives the real binary: `warden apply`
// asks for a critical fix, `warden serve` posts it to Slack, refuses what is unsigned,
// forged or stale (401) and what is signed but not a valid decision (one decision each,
// an ephemeral reply), applies the fix within seconds of the second approval, and follows
// it in the message; the simulator shows the role's trust fixed, `approvals list` the two
// decisions, and `audit verify` an intact log.
func TestServe_slackQuorumAppliesThroughTheProcess(t *testing.T) {
	const openTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]}`
	created := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC)
	ws := slackgatetest.NewWorkspace(t, sBotToken, map[string][]string{sGroup: {sDave}})
	// Checked decisions, the default: the replica signs what Slack's signature verified,
	// with the key gates.signers lists for @replicas.
	keys := t.TempDir()
	replicaKey, replicaPub := sshKeyFile(t, keys, "replica")
	_, carolPub := sshKeyFile(t, keys, "carol")
	conf := fmt.Sprintf(`gates:
  approvers: [carol]
  signers:
    carol: [%q]
    "@replicas": [%q]
  replica_key_file: %s
slack:
  channel: %s
  approvers: [%s, %s]
  approver_group: %s
  api_url: %s
identities:
  alice: {slack: %s}
serve:
  listen: 127.0.0.1:0
`, carolPub, replicaPub, replicaKey, sChannel, sAlice, sBob, sGroup, ws.URL(), sAlice)
	cr := startChildRun(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: "111111111111", Regions: []string{"us-east-1"},
		Roles: []*cloudsim.Role{{Name: "deploy", Created: created, AssumeRolePolicy: openTrust}}}}}}, conf)
	cr.plan(t)
	if out, err := cr.warden("apply", cr.planFile, "--confirm").CombinedOutput(); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	reqs := approvals(t, cr)
	var req gates.Request
	for _, r := range reqs {
		if r.Remediator == "aws.iam.update_trust_policy" {
			req = r
		}
	}
	if req.ID == "" || req.Quorum != 2 || req.Requester != "alice" {
		t.Fatalf("no critical trust request from alice: %+v", reqs)
	}

	// Every line it logs, at debug, is checked for secrets below.
	srv := startServe(t, cr.url, cr.args("serve", "--listen", "127.0.0.1:0", "--log-level", "debug"))
	msg := waitFor(t, "the request's message", func() (slackgatetest.Posted, bool) {
		for _, m := range ws.Posts() {
			if strings.Contains(m.Versions[0].Raw, req.ID) {
				return m, true
			}
		}
		return slackgatetest.Posted{}, false
	})
	if msg.Channel != sChannel {
		t.Errorf("posted to %s, want %s", msg.Channel, sChannel)
	}
	wantIn(t, "the posted message", slackgatetest.Text(msg.Versions[0]), "Approval needed: aws.iam.update_trust_policy (critical risk)",
		"arn:aws:iam::111111111111:role/deploy", "0 of 2; 2 more needed")
	if bs := slackgatetest.Buttons(msg.Versions[0]); bs[slackgate.ActionApprove] == nil || bs[slackgate.ActionDeny] == nil {
		t.Errorf("the message's buttons: %v", bs)
	}

	click := func(user, actionID string) string {
		return slackgatetest.Payload(slackgatetest.Click{User: user, ActionID: actionID, Request: req.ID, Channel: sChannel, TS: msg.TS})
	}
	post := func(body string, h http.Header) int {
		t.Helper()
		code, err := slackgatetest.Post(srv.url+"/slack/interactions", body, h)
		if err != nil {
			t.Fatal(err)
		}
		return code
	}

	// Refused before anything is parsed: unsigned, forged, stale.
	body := click(sBob, slackgate.ActionApprove)
	for name, h := range map[string]http.Header{
		"unsigned":         {},
		"forged":           slackgatetest.Sign("0000000000000000wrongsecret00000", body, time.Now()),
		"stale (6 min)":    slackgatetest.Sign(sSecret, body, time.Now().Add(-6*time.Minute)),
		"signed elsewhere": slackgatetest.Sign(sSecret, click(sBob, slackgate.ActionDeny), time.Now()),
	} {
		if code := post(body, h); code != http.StatusUnauthorized {
			t.Errorf("%s: %d, want 401", name, code)
		}
	}

	// Signed, but not a decision this user may take: an ephemeral reply each.
	signed := func(user, actionID string) {
		t.Helper()
		b := click(user, actionID)
		if code := post(b, slackgatetest.Sign(sSecret, b, time.Now())); code != http.StatusOK {
			t.Fatalf("%s's click: %d, want 200", user, code)
		}
	}
	reply := func(user string, n int) string {
		t.Helper()
		return strings.Join(waitFor(t, user+"'s reply", func() ([]string, bool) {
			r := ws.Replies(user)
			return r, len(r) >= n
		}), "\n")
	}
	signed(sMallory, slackgate.ActionApprove)
	wantIn(t, "mallory's reply", reply(sMallory, 1), "not an approver")
	signed(sAlice, slackgate.ActionApprove)
	wantIn(t, "alice's reply", reply(sAlice, 1), "the requester of an action cannot decide")
	signed(sBob, slackgate.ActionApprove)
	wantIn(t, "bob's reply", reply(sBob, 1), "1 of 2")
	signed(sBob, slackgate.ActionApprove)
	wantIn(t, "bob's second reply", reply(sBob, 2), "already decided")
	waitFor(t, "the message at 1 of 2", func() (string, bool) {
		s := slackgatetest.Text(lastOf(ws, msg.TS))
		return s, strings.Contains(s, "1 of 2")
	})

	// dave, through the approver group, completes the quorum: serve applies the fix.
	clicked := time.Now()
	signed(sDave, slackgate.ActionApprove)
	sdk := simtest.AWSConfig(cr.url)
	waitFor(t, "the role's trust fixed in the simulator", func() (string, bool) {
		out, err := iam.NewFromConfig(sdk).GetRole(context.Background(), &iam.GetRoleInput{RoleName: aws.String("deploy")})
		if err != nil {
			return err.Error(), false
		}
		doc, err := url.QueryUnescape(aws.ToString(out.Role.AssumeRolePolicyDocument))
		if err != nil {
			return err.Error(), false
		}
		// The fix denies everyone: no statement allows anything any more.
		return doc, strings.Contains(doc, `"Effect":"Deny"`) && !strings.Contains(doc, `"Effect":"Allow"`)
	})
	applied := time.Since(clicked)
	final := waitFor(t, "the message saying applied and verified", func() (string, bool) {
		s := slackgatetest.Text(lastOf(ws, msg.TS))
		return s, strings.Contains(s, "applied and verified")
	})
	t.Logf("second approval → trust fixed in the simulator: %v; message updated %v after the click", applied.Round(time.Millisecond), time.Since(clicked).Round(time.Millisecond))
	wantIn(t, "the final message", final, "Fixed: aws.iam.update_trust_policy")
	if len(slackgatetest.Buttons(lastOf(ws, msg.TS))) != 0 {
		t.Error("the applied request's message still has buttons")
	}

	out := srv.stop(t)
	for _, secret := range []string{sBotToken, sSecret} {
		if strings.Contains(out, secret) {
			t.Errorf("warden serve printed a Slack secret:\n%s", out)
		}
	}
	if n := ws.Calls("chat.postMessage"); n != len(reqs) {
		t.Errorf("%d messages posted for %d requests", n, len(reqs))
	}
	if ws.BadTokens() != 0 {
		t.Errorf("%d Slack calls without the bot token", ws.BadTokens())
	}
	var got gates.Request
	for _, r := range approvals(t, cr) {
		if r.ID == req.ID {
			got = r
		}
	}
	if got.State != gates.StateApproved || len(got.Decisions) != 2 || got.Decisions[0].Actor == got.Decisions[1].Actor {
		t.Errorf("request after the clicks: %s %+v, want approved by two decisions", got.State, got.Decisions)
	}
	rk, err := sign.ParseKey(replicaPub)
	if err != nil {
		t.Fatal(err)
	}
	replicaFP := sign.Fingerprint(rk)
	for _, d := range got.Decisions {
		if d.Signer != replicaFP || d.Signature == "" || d.Channel != gates.ChannelSlack {
			t.Errorf("decision of %s: channel %s, signer %q, want slack signed by the replica %s", d.Actor, d.Channel, d.Signer, replicaFP)
		}
	}
	if out, err := wardenChild(cr.url, "audit", "verify", "--db", cr.db).CombinedOutput(); err != nil {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
}

// approvals returns every approval request in the run's database, as `warden approvals
// list` prints them.
func approvals(t *testing.T, cr *childRun) []gates.Request {
	t.Helper()
	out, err := wardenChild(cr.url, "approvals", "list", "--all", "--format", "json", "--config", cr.cfg, "--db", cr.db).Output()
	if err != nil {
		t.Fatalf("approvals list: %v\n%s", err, out)
	}
	var list struct{ Requests []gates.Request }
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("approvals list: %v\n%s", err, out)
	}
	return list.Requests
}

// served is a `warden serve` child process.
type served struct {
	cmd  *exec.Cmd
	url  string
	mu   sync.Mutex
	out  strings.Builder
	done chan error
}

// startServe starts `warden serve` with the Slack secrets in its environment and waits
// until it is ready.
func startServe(t *testing.T, simURL string, args []string) *served {
	t.Helper()
	return startServeEnv(t, simURL, args, "WARDEN_SLACK_BOT_TOKEN="+sBotToken, "WARDEN_SLACK_SIGNING_SECRET="+sSecret)
}

// startServeEnv starts `warden serve` with env added to its environment and waits until
// it is ready.
func startServeEnv(t *testing.T, simURL string, args []string, env ...string) *served {
	t.Helper()
	s := &served{cmd: wardenChild(simURL, args...), done: make(chan error, 1)}
	s.cmd.Env = append(s.cmd.Env, env...)
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.cmd.Stdout = io.Discard
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.mu.Lock()
			s.out.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				listening <- m[1]
			}
		}
		s.done <- s.cmd.Wait()
	}()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	select {
	case s.url = <-listening:
	case err := <-s.done:
		t.Fatalf("warden serve exited: %v\n%s", err, s.output())
	case <-time.After(60 * time.Second):
		t.Fatalf("warden serve did not listen:\n%s", s.output())
	}
	waitFor(t, "/readyz", func() (int, bool) {
		resp, err := http.Get(s.url + "/readyz")
		if err != nil {
			return 0, false
		}
		resp.Body.Close()
		return resp.StatusCode, resp.StatusCode == http.StatusOK
	})
	return s
}

func (s *served) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// stop sends SIGTERM, expects a clean exit and returns what the process printed.
func (s *served) stop(t *testing.T) string {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("warden serve after SIGTERM: %v\n%s", err, s.output())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("warden serve did not drain within 30s:\n%s", s.output())
	}
	return s.output()
}

// lastOf is the latest version of the message posted at ts.
func lastOf(ws *slackgatetest.Workspace, ts string) slackgatetest.Version {
	for _, m := range ws.Posts() {
		if m.TS == ts {
			return m.Last()
		}
	}
	return slackgatetest.Version{}
}

// waitFor polls f until it reports done, for at most 20 seconds.
func waitFor[T any](t *testing.T, what string, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited 20s for %s; last: %v", what, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func wantIn(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}
