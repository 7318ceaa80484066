// Package slackgatetest is Slack for warden's tests: slack-go's slacktest server with the
// Web API methods warden calls (chat.postMessage, chat.update — which slacktest lacks —,
// chat.postEphemeral, usergroups.users.list), recording every message, every version of
// it and every ephemeral reply; and interaction payloads built and signed the way Slack
// builds and signs them. The slackgate tests use it in-process and cmd/warden's tests
// point a real `warden serve` at it.
package slackgatetest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slacktest"

	"github.com/warden-sec/warden/slackgate"
)

// Workspace is one test's Slack workspace.
type Workspace struct {
	srv   *slacktest.Server
	token string

	mu         sync.Mutex
	seq        int
	messages   map[string]*Posted // by ts
	order      []string
	ephemerals []Ephemeral
	groups     map[string][]string // user group → users
	calls      map[string]int
	limitNext  map[string]int // method → answer its next calls 429
	badToken   int
}

// Posted is a message as the workspace holds it.
type Posted struct {
	Channel  string
	TS       string
	Versions []Version // the first as posted, then each chat.update
}

// Version is one version of a message.
type Version struct {
	Text   string
	Blocks slack.Blocks
	Raw    string // the blocks' JSON as sent
}

// Ephemeral is a reply only its user sees.
type Ephemeral struct{ Channel, User, Text string }

// NewWorkspace starts a workspace that accepts botToken only and whose user groups have
// the given members; it stops when the test ends.
func NewWorkspace(t testing.TB, botToken string, groups map[string][]string) *Workspace {
	t.Helper()
	ws := &Workspace{token: botToken, messages: map[string]*Posted{}, groups: groups, calls: map[string]int{}, limitNext: map[string]int{}}
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

// URL is the Web API's base URL, for slack.api_url.
func (ws *Workspace) URL() string { return ws.srv.GetAPIURL() }

// handle checks the bot token, answers 429 when told to, and counts the call.
func (ws *Workspace) handle(method string, next func(w http.ResponseWriter, v url.Values)) http.HandlerFunc {
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
		if tok != ws.token {
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

func decodeVersion(v url.Values) (Version, error) {
	out := Version{Text: v.Get("text"), Raw: v.Get("blocks")}
	if out.Raw != "" {
		if err := json.Unmarshal([]byte(out.Raw), &out.Blocks); err != nil {
			return Version{}, err
		}
	}
	return out, nil
}

func (ws *Workspace) postMessage(w http.ResponseWriter, v url.Values) {
	ver, err := decodeVersion(v)
	if err != nil {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_blocks"})
		return
	}
	ws.seq++
	ts := fmt.Sprintf("1700000000.%06d", ws.seq)
	ws.messages[ts] = &Posted{Channel: v.Get("channel"), TS: ts, Versions: []Version{ver}}
	ws.order = append(ws.order, ts)
	writeJSON(w, map[string]any{"ok": true, "channel": v.Get("channel"), "ts": ts})
}

func (ws *Workspace) update(w http.ResponseWriter, v url.Values) {
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

func (ws *Workspace) postEphemeral(w http.ResponseWriter, v url.Values) {
	ws.ephemerals = append(ws.ephemerals, Ephemeral{Channel: v.Get("channel"), User: v.Get("user"), Text: v.Get("text")})
	writeJSON(w, map[string]any{"ok": true, "message_ts": "1700000000.999999"})
}

func (ws *Workspace) groupMembers(w http.ResponseWriter, v url.Values) {
	users, ok := ws.groups[v.Get("usergroup")]
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "no_such_subteam"})
		return
	}
	writeJSON(w, map[string]any{"ok": true, "users": users})
}

// Posts returns the messages posted so far, oldest first.
func (ws *Workspace) Posts() []Posted {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make([]Posted, 0, len(ws.order))
	for _, ts := range ws.order {
		m := *ws.messages[ts]
		m.Versions = append([]Version(nil), m.Versions...)
		out = append(out, m)
	}
	return out
}

// Replies returns the ephemeral replies to user so far.
func (ws *Workspace) Replies(user string) []string {
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

// Calls returns how many times method was called, whatever the answer.
func (ws *Workspace) Calls(method string) int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.calls[method]
}

// BadTokens returns how many calls came with a token other than the bot's.
func (ws *Workspace) BadTokens() int {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.badToken
}

// RateLimit makes the next n calls of method answer 429 with Retry-After: 30.
func (ws *Workspace) RateLimit(method string, n int) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.limitNext[method] = n
}

// Stop shuts the workspace down before the test ends: Slack unreachable.
func (ws *Workspace) Stop() { ws.srv.Stop() }

// Last returns the latest version of the message.
func (m Posted) Last() Version { return m.Versions[len(m.Versions)-1] }

// Text is the text of every header, section and context block of v, a line each.
func Text(v Version) string {
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

// Buttons returns v's buttons by action id.
func Buttons(v Version) map[string]*slack.ButtonBlockElement {
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

// HasReasonInput reports whether v asks for a deny reason.
func HasReasonInput(v Version) bool {
	for _, bl := range v.Blocks.BlockSet {
		if in, ok := bl.(*slack.InputBlock); ok && in.BlockID == slackgate.BlockReason {
			return true
		}
	}
	return false
}

// Click is a click on a button of an approval request's message.
type Click struct {
	User     string // Slack user id
	ActionID string // slackgate.ActionApprove, slackgate.ActionDeny, or another app's
	Request  string // the request id, the button's value
	Reason   string // typed in the reason box
	Channel  string
	TS       string // the message's ts
}

// Payload is the form body Slack posts for c: a block_actions interaction.
func Payload(c Click) string {
	p := map[string]any{
		"type":         "block_actions",
		"user":         map[string]any{"id": c.User, "username": strings.ToLower(c.User), "team_id": "T0TEAM001"},
		"api_app_id":   "A0APP0001",
		"token":        "legacy-verification-token",
		"container":    map[string]any{"type": "message", "message_ts": c.TS, "channel_id": c.Channel, "is_ephemeral": false},
		"trigger_id":   "1.2.3",
		"team":         map[string]any{"id": "T0TEAM001", "domain": "acme"},
		"channel":      map[string]any{"id": c.Channel, "name": "security-approvals"},
		"response_url": "https://hooks.slack.invalid/actions/T0TEAM001/1/x",
		"message":      map[string]any{"type": "message", "ts": c.TS, "text": "approval"},
		"state": map[string]any{"values": map[string]any{
			slackgate.BlockReason: map[string]any{slackgate.ActionReason: map[string]any{"type": "plain_text_input", "value": c.Reason}},
		}},
		"actions": []any{map[string]any{
			"type": "button", "block_id": slackgate.BlockDecide, "action_id": c.ActionID, "value": c.Request,
			"text": map[string]any{"type": "plain_text", "text": "Approve"}, "action_ts": "1700000001.000001",
		}},
	}
	b, err := json.Marshal(p)
	if err != nil {
		panic(err) // a map of strings always marshals
	}
	return url.Values{"payload": {string(b)}}.Encode()
}

// Sign returns Slack's headers for body signed with secret at time at: v0, HMAC-SHA256
// over "v0:timestamp:body".
func Sign(secret, body string, at time.Time) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%s:%s", ts, body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	return h
}

// Post sends body with the headers to endpoint as Slack does and returns the status.
func Post(endpoint, body string, header http.Header) (int, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
