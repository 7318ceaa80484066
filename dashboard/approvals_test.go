package dashboard_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

var (
	rowID      = regexp.MustCompile(`<details class="req" id="req-([^"]+)"`)
	groupHead  = regexp.MustCompile(`<h2 class="group">([^<]+) <span class="count">\((\d+)\)</span>(?: <code class="pid">([^<]+)</code>)?`)
	confirmTok = regexp.MustCompile(`name="confirm" value="([^"]+)"`)
)

// rowIDs are the ids of the approvals page's rows, in order.
func rowIDs(body string) []string {
	var out []string
	for _, m := range rowID.FindAllStringSubmatch(body, -1) {
		out = append(out, m[1])
	}
	return out
}

// groups are the approvals page's group headings: key (the policy id, account or risk)
// and count, in order.
func groups(body string) []string {
	var out []string
	for _, m := range groupHead.FindAllStringSubmatch(body, -1) {
		key := cmp.Or(m[3], m[1])
		out = append(out, key+"="+m[2])
	}
	return out
}

// requestRow is what the tests know of a request, read through the gate and the
// machine, not the page.
type requestRow struct {
	gates.Request
	policy, account string
}

func requestRows(t *testing.T, f *fixture) []requestRow {
	t.Helper()
	ctx := context.Background()
	reqs, err := f.env.Gate.List(ctx, gates.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	m := f.env.Machine("x", remediate.Limits{})
	var out []requestRow
	for _, r := range reqs {
		row := requestRow{Request: r}
		if a, err := m.Action(ctx, r.ActionID); err == nil && a != nil {
			row.policy, row.account = a.Policy, a.Account
		}
		out = append(out, row)
	}
	return out
}

// The approvals page filters, sorts and groups the requests from GET parameters,
// rendered by the server: each view lists exactly the requests the gate holds that match,
// in the chosen order, with a count per group.
func TestApprovals_filterSortGroup(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, dsn(t), fixtureOptions{world: remediatetest.World(4), config: dashboard.Config{Auth: dashboard.AuthRequired},
				scans: []string{acmeSnapshot}})
			ctx := context.Background()
			denied := f.pending[0]
			if _, err := f.env.Gate.DecideAuthorized(ctx, denied, "carol", string(gates.ChannelWeb), false, "not during the freeze"); err != nil {
				t.Fatal(err)
			}
			// Two more, of other risks and times, with no action recorded (no policy, no account).
			newRequest(t, f, "act-high", "alice", time.Now().Add(-2*time.Hour), findings.RiskHigh)
			newRequest(t, f, "act-critical", "alice", time.Now().Add(-time.Hour), findings.RiskCritical)
			all := requestRows(t, f)
			var pending []requestRow
			for _, r := range all {
				if r.State == gates.StatePending {
					pending = append(pending, r)
				}
			}
			if len(pending) < 3 {
				t.Fatalf("%d pending requests, want 3 or more", len(pending))
			}
			byRisk := func(a, b requestRow) int {
				return cmp.Or(cmp.Compare(b.Risk, a.Risk), a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.ID, b.ID))
			}
			pick := func(rows []requestRow, keep func(requestRow) bool, order func(a, b requestRow) int) []string {
				var out []requestRow
				for _, r := range rows {
					if keep(r) {
						out = append(out, r)
					}
				}
				slices.SortStableFunc(out, order)
				ids := []string{}
				for _, r := range out {
					ids = append(ids, r.ID)
				}
				return ids
			}
			any := func(requestRow) bool { return true }
			one := pending[len(pending)-1]
			cases := []struct {
				name, query string
				want        []string
			}{
				{"pending, highest risk first", "", pick(pending, any, byRisk)},
				{"by risk", "?risk=" + one.Risk.String(), pick(pending, func(r requestRow) bool { return r.Risk == one.Risk }, byRisk)},
				{"by remediator", "?remediator=" + url.QueryEscape(one.Remediator),
					pick(pending, func(r requestRow) bool { return r.Remediator == one.Remediator }, byRisk)},
				{"by policy", "?policy=" + url.QueryEscape(one.policy), pick(pending, func(r requestRow) bool { return r.policy == one.policy }, byRisk)},
				{"by account", "?account=" + one.account + "&risk=critical", []string{}},
				{"denied", "?state=denied", []string{denied}},
				{"every state", "?state=all", pick(all, any, byRisk)},
				{"oldest first", "?sort=oldest", pick(pending, any, func(a, b requestRow) int {
					return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.ID, b.ID))
				})},
				{"by policy name", "?sort=policy", pick(pending, any, func(a, b requestRow) int {
					return cmp.Or(cmp.Compare(a.policy, b.policy), a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.ID, b.ID))
				})},
				{"a state that is not one", "?state=%3Cscript%3E", pick(pending, any, byRisk)},
			}
			c := f.client(t, f.tokens["vera"])
			for _, tt := range cases {
				r := c.get("/approvals" + tt.query)
				if r.StatusCode != http.StatusOK {
					t.Fatalf("%s: %d", tt.name, r.StatusCode)
				}
				if got := rowIDs(r.body); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
					t.Errorf("%s (%s): rows %v, want %v", tt.name, tt.query, got, tt.want)
				}
				if strings.Contains(r.body, "<script>") {
					t.Errorf("%s: the query reached the page unescaped", tt.name)
				}
			}
			// Groups, with their counts: risks from the highest, policies and accounts by name.
			counts := func(key func(requestRow) string, order func(a, b string) int) []string {
				n := map[string]int{}
				for _, r := range pending {
					n[key(r)]++
				}
				var keys []string
				for k := range n {
					keys = append(keys, k)
				}
				slices.SortFunc(keys, order)
				var out []string
				for _, k := range keys {
					out = append(out, k+"="+strconv.Itoa(n[k]))
				}
				return out
			}
			risk := func(s string) findings.Risk { r, _ := findings.ParseRisk(s); return r }
			unknown := func(s string) string { return cmp.Or(s, "(unknown)") }
			for _, g := range []struct {
				by   string
				want []string
			}{
				{"risk", counts(func(r requestRow) string { return r.Risk.String() }, func(a, b string) int { return cmp.Compare(risk(b), risk(a)) })},
				{"policy", counts(func(r requestRow) string { return unknown(r.policy) }, strings.Compare)},
				{"account", counts(func(r requestRow) string { return unknown(r.account) }, strings.Compare)},
			} {
				if got := groups(c.get("/approvals?group=" + g.by).body); !slices.Equal(got, g.want) {
					t.Errorf("grouped by %s: %v, want %v", g.by, got, g.want)
				}
			}
			// A viewer gets no checkboxes and no bulk form; an approver gets one box per
			// request they may decide, ticked by "select all".
			if body := c.get("/approvals").body; strings.Contains(body, `form="bulk"`) || strings.Contains(body, `id="bulk"`) {
				t.Error("the viewer is offered the bulk decision")
			}
			carol := f.client(t, f.tokens["carol"])
			body := carol.get("/approvals?select=all").body
			if n := strings.Count(body, `form="bulk"`); n != len(pending) {
				t.Errorf("carol has %d checkboxes, want %d", n, len(pending))
			}
			if n := strings.Count(body, ` checked>`); n != len(pending) {
				t.Errorf("select all ticked %d boxes, want %d", n, len(pending))
			}
		})
	}
}

// newRequest makes a pending approval request for an action of its own, asked for by
// requester at the given time, through the gate.
func newRequest(t *testing.T, f *fixture, actionID, requester string, at time.Time, risk findings.Risk) string {
	t.Helper()
	f.env.SetNow(func() time.Time { return at })
	defer f.env.SetNow(time.Now)
	var id string
	a := remediators.Action{ID: actionID, Remediator: "aws.ec2.revoke_ingress", Target: "arn:aws:ec2:us-east-1:111111111111:security-group/sg-" + actionID,
		Part: "ingress/tcp/22-22/0.0.0.0/0", Risk: risk, Account: "111111111111"}
	err := f.env.Store.InTx(context.Background(), func(tx *store.Tx) error {
		r, err := f.env.Gate.Request(context.Background(), tx, a, "hash-"+actionID, requester)
		id = r.ID
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Several requests are decided at once only behind a confirmation: the first POST lists
// every change and decides nothing; a second POST without the confirmation, with another
// list, forged or from a viewer decides nothing either; the confirmed one decides each
// request through the gate, one decision and audit entry each, and refuses the
// requester's own and an expired one on their own.
func TestBulkDecide_confirmThenEach(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := small(t, dsn(t))
			ctx := context.Background()
			own := newRequest(t, f, "act-bulk-own", "carol", time.Now(), findings.RiskMedium)
			expired := newRequest(t, f, "act-bulk-old", "alice", time.Now().Add(-48*time.Hour), findings.RiskMedium)
			ids := []string{f.pending[0], f.pending[1], own, expired}

			c := f.client(t, "")
			c.login(f.tokens["carol"])
			csrf := c.csrf("/approvals")
			form := func(kv ...string) url.Values {
				v := url.Values{"id": ids, "decision": {"approve"}}
				for i := 0; i+1 < len(kv); i += 2 {
					v.Set(kv[i], kv[i+1])
				}
				return v
			}
			undecided := func(when string) {
				t.Helper()
				for _, id := range ids {
					req, err := f.env.Gate.Get(ctx, id)
					if err != nil || req.State != gates.StatePending || len(req.Decisions) != 0 {
						t.Fatalf("%s: request %s is %s with %d decisions (%v); want pending and undecided", when, id, req.State, len(req.Decisions), err)
					}
					if es := f.audit(t, audit.KindApprovalApproved, id); len(es) != 0 {
						t.Fatalf("%s: request %s has an approval in the audit log", when, id)
					}
				}
			}

			// The first POST: the confirmation, listing every change.
			r := c.post("/approvals/confirm", form("csrf", csrf, "back", "/approvals?group=risk&select=all"))
			if r.StatusCode != http.StatusOK {
				t.Fatalf("confirm: %d\n%s", r.StatusCode, r.body)
			}
			// The way back keeps the page's view, not its selection.
			if !strings.Contains(r.body, `name="back" value="/approvals?group=risk"`) {
				t.Error("the confirmation does not lead back to the page's view")
			}
			for _, id := range ids {
				req, _ := f.env.Gate.Get(ctx, id)
				row := regexp.MustCompile(`(?s)<tr id="c-` + id + `">.*?</tr>`).FindString(r.body)
				if !strings.Contains(row, template.HTMLEscapeString(req.Remediator)) || !strings.Contains(row, template.HTMLEscapeString(req.Target)) ||
					!strings.Contains(row, template.HTMLEscapeString(req.Part)) || !strings.Contains(row, ">"+req.Risk.String()+"<") {
					t.Errorf("the confirmation's row of %s does not show its change:\n%s", id, row)
				}
			}
			if !strings.Contains(r.body, "You requested this fix") {
				t.Error("the confirmation does not warn of carol's own request")
			}
			undecided("after the first POST")
			m := confirmTok.FindStringSubmatch(r.body)
			if m == nil {
				t.Fatalf("no confirmation token in the page:\n%s", r.body)
			}
			confirm := m[1]

			// Second POSTs that are not the confirmed one.
			vera := f.client(t, "")
			vera.login(f.tokens["vera"])
			evil := http.Header{"Origin": {"https://evil.example"}}
			refused := []struct {
				name   string
				c      *client
				path   string
				form   url.Values
				header http.Header
				status int
			}{
				{"no confirmation", c, "/approvals/decide", form("csrf", csrf), nil, http.StatusBadRequest},
				{"a wrong confirmation", c, "/approvals/decide", form("csrf", csrf, "confirm", "AAAA"), nil, http.StatusBadRequest},
				{"another list", c, "/approvals/decide", func() url.Values {
					v := form("csrf", csrf, "confirm", confirm)
					v["id"] = append(v["id"], f.pending[2])
					return v
				}(), nil, http.StatusBadRequest},
				{"another decision", c, "/approvals/decide", form("csrf", csrf, "confirm", confirm, "decision", "deny", "reason", "x"), nil, http.StatusBadRequest},
				{"no CSRF token", c, "/approvals/decide", form("confirm", confirm), nil, http.StatusForbidden},
				{"another origin", c, "/approvals/decide", form("csrf", csrf, "confirm", confirm), evil, http.StatusForbidden},
				{"a forged confirmation POST", c, "/approvals/confirm", form("csrf", csrf), evil, http.StatusForbidden},
				{"a viewer", vera, "/approvals/decide", form("csrf", vera.csrf("/approvals"), "confirm", confirm), nil, http.StatusForbidden},
				{"no request selected", c, "/approvals/confirm", url.Values{"csrf": {csrf}, "decision": {"approve"}}, nil, http.StatusBadRequest},
				{"more than 200", c, "/approvals/confirm", func() url.Values {
					v := form("csrf", csrf)
					for i := range 201 {
						v.Add("id", fmt.Sprintf("apr-%012d", i))
					}
					return v
				}(), nil, http.StatusBadRequest},
			}
			for _, tt := range refused {
				h := tt.header
				if h == nil {
					h = tt.c.sameOrigin()
				}
				if r := tt.c.do(http.MethodPost, tt.path, tt.form, h); r.StatusCode != tt.status {
					t.Errorf("%s: %d, want %d\n%.300s", tt.name, r.StatusCode, tt.status, r.body)
				}
			}
			undecided("after the refused POSTs")

			// A deny needs its reason, once for all.
			dr := c.post("/approvals/confirm", form("csrf", csrf, "decision", "deny"))
			dm := confirmTok.FindStringSubmatch(dr.body)
			if dm == nil {
				t.Fatalf("no confirmation of the deny:\n%s", dr.body)
			}
			if r := c.post("/approvals/decide", form("csrf", csrf, "decision", "deny", "confirm", dm[1])); r.StatusCode != http.StatusBadRequest ||
				!strings.Contains(r.body, "a deny needs a reason") {
				t.Errorf("a bulk deny without a reason: %d\n%.300s", r.StatusCode, r.body)
			}
			undecided("after a deny without a reason")

			// The confirmed POST decides each through the gate.
			r = c.post("/approvals/decide", form("csrf", csrf, "confirm", confirm, "reason", "CHG-77"))
			if r.StatusCode != http.StatusOK || !strings.Contains(r.body, "2 recorded, 2 refused") {
				t.Fatalf("decide: %d\n%s", r.StatusCode, r.body)
			}
			for _, id := range ids[:2] {
				req, err := f.env.Gate.Get(ctx, id)
				d, ok := req.DecisionBy("carol")
				if err != nil || !ok || d.Vote != gates.VoteApprove || d.Channel != gates.ChannelWeb || d.Reason != "CHG-77" || len(req.Decisions) != 1 {
					t.Errorf("request %s after the bulk approval: %+v %v", id, req.Decisions, err)
				}
				es := f.audit(t, audit.KindApprovalApproved, id)
				if len(es) != 1 || es[0].Actor != "carol" || !strings.Contains(string(es[0].Data), `"channel":"web"`) {
					t.Errorf("audit of %s: %+v", id, es)
				}
			}
			if req, _ := f.env.Gate.Get(ctx, own); req.State != gates.StatePending || len(req.Decisions) != 0 {
				t.Errorf("carol's own request was decided: %+v", req)
			}
			if req, _ := f.env.Gate.Get(ctx, expired); req.State != gates.StateExpired || len(req.Decisions) != 0 {
				t.Errorf("the expired request: %+v", req)
			}
			for id, says := range map[string]string{own: "carol requested it", expired: "expired"} {
				row := regexp.MustCompile(`(?s)<tr id="res-` + id + `">.*?</tr>`).FindString(r.body)
				if !strings.Contains(row, `class="refused">refused: `) || !strings.Contains(row, says) {
					t.Errorf("the result of %s does not say %q:\n%s", id, says, row)
				}
			}
			// The same confirmation again: each is refused, nothing is decided twice.
			r = c.post("/approvals/decide", form("csrf", csrf, "confirm", confirm, "reason", "CHG-77"))
			if !strings.Contains(r.body, "0 recorded, 4 refused") {
				t.Errorf("a replayed confirmation:\n%s", r.body)
			}
			for _, id := range ids[:2] {
				if es := f.audit(t, audit.KindApprovalApproved, id); len(es) != 1 {
					t.Errorf("request %s approved %d times", id, len(es))
				}
			}
			f.verifyAudit(t)
		})
	}
}

// The findings table names each policy by its title, its id beside it, not the id alone.
func TestFindings_showTitles(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	fs, err := f.env.Store.Findings(context.Background(), 1)
	if err != nil || len(fs) == 0 {
		t.Fatalf("findings of scan 1: %d, %v", len(fs), err)
	}
	c := f.client(t, f.tokens["vera"])
	for _, x := range fs[:min(5, len(fs))] {
		if x.Title == "" {
			t.Fatalf("finding %s of %s has no title", x.Fingerprint, x.Policy)
		}
		body := c.get("/findings?policy=" + url.QueryEscape(x.Policy)).body
		want := `<td class="policy" title="` + x.Policy + `"><div class="title">` + template.HTMLEscapeString(x.Title) + `</div><div class="pid">` + x.Policy + `</div></td>`
		if !strings.Contains(body, want) {
			t.Errorf("%s: the table does not show %q", x.Policy, want)
		}
	}
}
