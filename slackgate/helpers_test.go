package slackgate_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/slackgate"
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

// workspace is Slack for the tests: slacktest's server with the Web API methods warden
// calls, recording every message, every version of it and every ephemeral reply.
type workspace struct {
	srv *slacktest.Server

	mu         sync.Mutex
	seq        int
	messages   map[string]*posted // by ts
	order      []string
	ephemerals []ephemeral
	members    map[string][]string // user group → users
	calls      map[string]int
	limitNext  map[string]int // method → answer its next calls 429
	badToken   int
}

type posted struct {
	Channel  string
	TS       string
	Versions []version // the first as posted, then each chat.update
}

type version struct {
	Text   string
	Blocks slack.Blocks
	Raw    string // the blocks' JSON as sent
}

type ephemeral struct{ Channel, User, Text string }

func newWorkspace(t *testing.T) *workspace {
	t.Helper()
	ws := &workspace{messages: map[string]*posted{}, members: map[string][]string{group: {uDave}}, calls: map[string]int{}, limitNext: map[string]int{}}
	ws.srv = slacktest.NewTestServer(func(c slacktest.Customize) {
		c.Handle("/chat.postMessage", ws.handle("chat.postMessage", ws.postMessage))
		c.Handle("/chat.update", ws.handle("chat.update", ws.update))
		c.Handle("/chat.postEphemeral", ws.handle("chat.postEphemeral", ws.postEphemeral))
		c.Handle("/usergroups.users.list", ws.handle("usergroups.users.list", ws.groupMembers))
	})
	ws.srv.Start()
	t.Cleanup(ws.srv.Stop)
	return ws
}

func (ws *workspace) url() string { return ws.srv.GetAPIURL() }

// handle checks the bot token, answers 429 when told to, and counts the call.
func (ws *workspace) handle(method string, next func(w http.ResponseWriter, v url.Values)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if tok == "" {
			tok = r.Form.Get("token")
		}
		ws.mu.Lock()
		defer ws.mu.Unlock()
		ws.calls[method]++
		if tok != botToken {
			ws.badToken++
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		if ws.limitNext[method] > 0 {
			ws.limitNext[method]--
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
			writeJSON(w, map[string]any{"ok": false, "error": "ratelimited"})
			return
		}
		next(w, r.Form)
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func decodeVersion(v url.Values) (version, error) {
	out := version{Text: v.Get("text"), Raw: v.Get("blocks")}
	if out.Raw != "" {
		if err := json.Unmarshal([]byte(out.Raw), &out.Blocks); err != nil {
			return version{}, err
		}
	}
	return out, nil
}

func (ws *workspace) postMessage(w http.ResponseWriter, v url.Values) {
	ver, err := decodeVersion(v)
	if err != nil {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_blocks"})
		return
	}
	ws.seq++
	ts := fmt.Sprintf("1700000000.%06d", ws.seq)
	ws.messages[ts] = &posted{Channel: v.Get("channel"), TS: ts, Versions: []version{ver}}
	ws.order = append(ws.order, ts)
	writeJSON(w, map[string]any{"ok": true, "channel": v.Get("channel"), "ts": ts})
}

func (ws *workspace) update(w http.ResponseWriter, v url.Values) {
	m, ok := ws.messages[v.Get("ts")]
	if !ok || m.Channel != v.Get("channel") {
		writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	}
	ver, err := decodeVersion(v)
	if err != nil {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_blocks"})
		return
	}
	m.Versions = append(m.Versions, ver)
	writeJSON(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": ver.Text})
}

func (ws *workspace) postEphemeral(w http.ResponseWriter, v url.Values) {
	ws.ephemerals = append(ws.ephemerals, ephemeral{Channel: v.Get("channel"), User: v.Get("user"), Text: v.Get("text")})
	writeJSON(w, map[string]any{"ok": true, "message_ts": "1700000000.999999"})
}

func (ws *workspace) groupMembers(w http.ResponseWriter, v url.Values) {
	users, ok := ws.members[v.Get("usergroup")]
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "no_such_subteam"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "users": users})
}

// posts returns the messages posted so far, oldest first.
func (ws *workspace) posts() []posted {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make([]posted, 0, len(ws.order))
	for _, ts := range ws.order {
		m := *ws.messages[ts]
		m.Versions = append([]version(nil), m.Versions...)
		out = append(out, m)
	}
	return out
}

// replies returns the ephemeral replies to user so far.
func (ws *workspace) replies(user string) []string {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []string
	for _, e := range ws.ephemerals {
		if e.User == user {
			out = append(out, e.Text)
		}
	}
	return out
}

func (ws *workspace) callsOf(method string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.calls[method]
}

func (ws *workspace) rateLimit(method string, n int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.limitNext[method] = n
}

// harness is one test's simulator, store, gate, machine, Slack and warden's endpoint.
type harness struct {
	t        *testing.T
	e        *remediatetest.Env
	ws       *workspace
	machine  *remediate.Machine
	n        *slackgate.Notifier
	h        *slackgate.Handler
	endpoint string // the interaction endpoint's URL

	mu        sync.Mutex
	now       time.Time
	decisions []string // OnDecision calls
}

var gatesConfig = gates.Config{Approvers: []string{"carol", "erin"}}

var (
	slackConfig = slackgate.Config{Channel: channel, Approvers: []string{uAlice, uBob}, ApproverGroup: group}
	identities  = slackgate.Identities{"alice": {Slack: uAlice}, "carol": {Slack: uCarol}}
)

func start(t *testing.T, dsn string) *harness {
	t.Helper()
	hs := &harness{t: t, now: time.Now().UTC()}
	hs.e = remediatetest.Start(t, dsn, world(), gatesConfig, remediatetest.Options{})
	hs.e.SetNow(hs.clock)
	hs.ws = newWorkspace(t)
	hs.machine = hs.e.Machine("alice", remediate.Limits{})
	hs.n, hs.h = hs.channel(t)
	return hs
}

// channel builds a notifier and its handler over the harness's store, as a (re)started
// warden serve does, and serves the handler over real HTTP.
func (hs *harness) channel(t *testing.T) (*slackgate.Notifier, *slackgate.Handler) {
	t.Helper()
	cfg := slackConfig
	cfg.APIURL = hs.ws.url()
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
	p := map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": user, "username": strings.ToLower(user), "team_id": "T0TEAM001"},
		"api_app_id":   "A0APP0001",
		"token":        "legacy-verification-token",
		"container":    map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"trigger_id":   "1.2.3",
		"team":         map[string]any{"id": "T0TEAM001", "domain": "acme"},
		"channel":      map[string]any{"id": channel, "name": "security-approvals"},
		"response_url": "https://hooks.slack.invalid/actions/T0TEAM001/1/x",
		"message":      map[string]any{"type": "message", "ts": ts, "text": "approval"},
		"state": map[string]any{"values": map[string]any{
			slackgate.BlockReason: map[string]any{slackgate.ActionReason: map[string]any{"type": "plain_text_input", "value": reason}},
		}},
		"actions": []any{map[string]any{
			"type": "button", "block_id": slackgate.BlockDecide, "action_id": actionID, "value": id,
			"text": map[string]any{"type": "plain_text", "text": "Approve"}, "action_ts": "1700000001.000001",
		}},
	}
	b, _ := json.Marshal(p)
	return url.Values{"payload": {string(b)}}.Encode()
}

// sign returns Slack's headers for body signed with secret at time at.
func sign(secret, body string, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// send posts body with headers to the endpoint, waits for the work it started, and
// returns the status code.
func (hs *harness) send(body string, header http.Header) int {
	hs.t.Helper()
	req, err := http.NewRequest(http.MethodPost, hs.endpoint, strings.NewReader(body))
	if err != nil {
		hs.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		hs.t.Fatal(err)
	}
	resp.Body.Close()
	hs.h.Wait()
	return resp.StatusCode
}

// click sends a signed click of user on a button of request id's message.
func (hs *harness) click(user, actionID, id, reason string) int {
	hs.t.Helper()
	ts := ""
	if m, ok, err := hs.n.Message(context.Background(), id); err == nil && ok {
		ts = m.TS
	}
	body := payload(user, actionID, id, reason, ts)
	return hs.send(body, sign(signingSecret, body, time.Now()))
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
func (hs *harness) messageOf(id string) posted {
	hs.t.Helper()
	var found []posted
	for _, m := range hs.ws.posts() {
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
func last(m posted) string { return textOf(m.Versions[len(m.Versions)-1]) }

func textOf(v version) string {
	var b strings.Builder
	for _, bl := range v.Blocks.BlockSet {
		switch x := bl.(type) {
		case *slack.HeaderBlock:
			b.WriteString(x.Text.Text + "\n")
		case *slack.SectionBlock:
			if x.Text != nil {
				b.WriteString(x.Text.Text + "\n")
			}
			for _, f := range x.Fields {
				b.WriteString(f.Text + "\n")
			}
		case *slack.ContextBlock:
			for _, e := range x.ContextElements.Elements {
				if t, ok := e.(*slack.TextBlockObject); ok {
					b.WriteString(t.Text + "\n")
				}
			}
		}
	}
	return b.String()
}

// buttons returns the message version's buttons by action id.
func buttons(v version) map[string]*slack.ButtonBlockElement {
	out := map[string]*slack.ButtonBlockElement{}
	for _, bl := range v.Blocks.BlockSet {
		if a, ok := bl.(*slack.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if b, ok := e.(*slack.ButtonBlockElement); ok {
					out[b.ActionID] = b
				}
			}
		}
	}
	return out
}

func hasReasonInput(v version) bool {
	for _, bl := range v.Blocks.BlockSet {
		if in, ok := bl.(*slack.InputBlock); ok && in.BlockID == slackgate.BlockReason {
			return true
		}
	}
	return false
}

func wantContains(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s lacks %q:\n%s", what, sub, s)
		}
	}
}
