package slackgate_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/slackgate"
	"github.com/warden-sec/warden/slackgate/slackgatetest"
)

// The people of the tests. alice requests fixes (from the CLI) and is linked to her Slack
// user, which is also in slack.approvers; bob is in slack.approvers only; carol is in
// gates.approvers and linked to her Slack user; dave is a member of the approver group;
// mallory is nobody.
const (
	uAlice   = "U0AAAAAAA"
	uBob     = "U0BBBBBBB"
	uCarol   = "U0CCCCCCC"
	uDave    = "U0DDDDDDD"
	uMallory = "U0EEEEEEE"
	group    = "S0GROUP01"
	channel  = "C0123456789"

	botToken      = "xoxb-1111-2222-testtoken"
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// openTrust lets anyone assume the role: a critical finding (quorum 2).
const openTrust = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"}]}`

// world is remediatetest's account (SSH open on one group: a medium fix) with a role
// anyone may assume (a critical fix).
func world() *cloudsim.World {
	w := remediatetest.World(1)
	w.AWS.Accounts[0].Roles = []*cloudsim.Role{{Name: "deploy", Created: remediatetest.T0, AssumeRolePolicy: openTrust}}
	return w
}

// harness is one test's simulator, store, gate, machine, Slack and warden's endpoint.
type harness struct {
	t        *testing.T
	e        *remediatetest.Env
	ws       *slackgatetest.Workspace
	machine  *remediate.Machine
	n        *slackgate.Notifier
	h        *slackgate.Handler
	endpoint string // the interaction endpoint's URL

	mu        sync.Mutex
	now       time.Time
	decisions []string // OnDecision calls
}

var gatesConfig = gates.Config{Approvers: []string{"carol", "erin"}, UncheckedNames: true}

var (
	slackConfig = slackgate.Config{Channel: channel, Approvers: []string{uAlice, uBob}, ApproverGroup: group}
	identities  = slackgate.Identities{"alice": {Slack: uAlice}, "carol": {Slack: uCarol}}
)

func start(t *testing.T, dsn string) *harness {
	t.Helper()
	hs := &harness{t: t, now: time.Now().UTC()}
	hs.e = remediatetest.Start(t, dsn, world(), gatesConfig, remediatetest.Options{})
	hs.e.SetNow(hs.clock)
	hs.ws = slackgatetest.NewWorkspace(t, botToken, map[string][]string{group: {uDave}})
	hs.machine = hs.e.Machine("alice", remediate.Limits{})
	hs.n, hs.h = hs.channel(t)
	return hs
}

// channel builds a notifier and its handler over the harness's store, as a (re)started
// warden serve does, and serves the handler over real HTTP.
func (hs *harness) channel(t *testing.T) (*slackgate.Notifier, *slackgate.Handler) {
	t.Helper()
	cfg := slackConfig
	cfg.APIURL = hs.ws.URL()
	n, err := slackgate.NewNotifier(slackgate.Options{Config: cfg, Identities: identities,
		Secrets: slackgate.NewSecrets(botToken, signingSecret), Store: hs.e.Store, Gate: hs.e.Gate, Actions: hs.machine,
		OnDecision: func(id string) {
			hs.mu.Lock()
			defer hs.mu.Unlock()
			hs.decisions = append(hs.decisions, id)
		},
		Now: hs.clock})
	if err != nil {
		t.Fatal(err)
	}
	h := slackgate.NewHandler(n)
	mux := http.NewServeMux()
	mux.Handle("POST /slack/interactions", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Wait)
	hs.endpoint = srv.URL + "/slack/interactions"
	return n, h
}

func (hs *harness) clock() time.Time {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.now
}

func (hs *harness) advance(d time.Duration) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.now = hs.now.Add(d)
}

func (hs *harness) onDecision() []string {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return append([]string(nil), hs.decisions...)
}

// request plans the account as alice and applies the first action of remediator:
// it becomes an approval request, whose id is returned with its action's.
func (hs *harness) request(remediator string) (reqID, actionID string) {
	hs.t.Helper()
	p := remediatetest.Only(hs.e.Plan(hs.t, "alice"), remediator, 1)
	if len(p.Actions) != 1 {
		hs.t.Fatalf("no %s action planned", remediator)
	}
	res, err := hs.machine.Apply(context.Background(), p, true)
	if err != nil {
		hs.t.Fatal(err)
	}
	it := remediatetest.ItemOf(hs.t, res, p.Actions[0].ID)
	if it.Request == "" {
		hs.t.Fatalf("%s: no approval request: %+v", remediator, it)
	}
	return it.Request, it.Action
}

func (hs *harness) sync() {
	hs.t.Helper()
	if err := hs.n.Sync(context.Background()); err != nil {
		hs.t.Fatalf("sync: %v", err)
	}
}

// payload is a block_actions interaction as Slack sends it for a click on button
// actionID of the message of request id, with reason typed in the reason box.
func payload(user, actionID, id, reason, ts string) string {
	return slackgatetest.Payload(slackgatetest.Click{User: user, ActionID: actionID, Request: id, Reason: reason, Channel: channel, TS: ts})
}

// send posts body with headers to the endpoint, waits for the work it started, and
// returns the status code.
func (hs *harness) send(body string, header http.Header) int {
	hs.t.Helper()
	code, err := slackgatetest.Post(hs.endpoint, body, header)
	if err != nil {
		hs.t.Fatal(err)
	}
	hs.h.Wait()
	return code
}

// click sends a signed click of user on a button of request id's message.
func (hs *harness) click(user, actionID, id, reason string) int {
	hs.t.Helper()
	ts := ""
	if m, ok, err := hs.n.Message(context.Background(), id); err == nil && ok {
		ts = m.TS
	}
	body := payload(user, actionID, id, reason, ts)
	return hs.send(body, slackgatetest.Sign(signingSecret, body, time.Now()))
}

func (hs *harness) get(id string) gates.Request {
	hs.t.Helper()
	r, err := hs.e.Gate.Get(context.Background(), id)
	if err != nil {
		hs.t.Fatal(err)
	}
	return r
}

// messageOf returns the message posted for request id, by its context line.
func (hs *harness) messageOf(id string) slackgatetest.Posted {
	hs.t.Helper()
	var found []slackgatetest.Posted
	for _, m := range hs.ws.Posts() {
		if strings.Contains(m.Versions[0].Raw, id) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		hs.t.Fatalf("request %s: %d messages, want 1", id, len(found))
	}
	return found[0]
}

// last is the text of every block of the message's latest version, joined.
func last(m slackgatetest.Posted) string { return slackgatetest.Text(m.Last()) }

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}
