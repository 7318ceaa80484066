package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store/storetest"
	"github.com/warden-sec/warden/waivers"
)

// Every state-changing request is refused unless its principal holds the role, its
// CSRF token is the principal's own, and the browser says it comes from this origin; a
// refusal changes nothing. Then an approver's approval is recorded through the gate,
// with its audit entry, and the gate's own refusals (the requester, a second decision,
// a deny without a reason) are told on the page.
func TestDecide_refusalsThenApproval(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := small(t, dsn(t))
			id := f.pending[0]
			approve := "/approvals/" + id + "/approve"
			sessions := map[string]*client{}
			for _, who := range []string{"vera", "carol", "alice", "adam"} {
				c := f.client(t, "")
				if r := c.login(f.tokens[who]); r.StatusCode != http.StatusSeeOther {
					t.Fatalf("login %s: %d", who, r.StatusCode)
				}
				sessions[who] = c
			}
			bearer := f.client(t, f.tokens["carol"])
			token := func(who string) string { return sessions[who].csrf("/approvals") }
			evil := http.Header{"Origin": {"https://evil.example"}}
			cases := []struct {
				name   string
				c      *client
				path   string
				form   url.Values
				header http.Header // nil: what the dashboard's own page sends
				status int
			}{
				{"viewer with its own CSRF token", sessions["vera"], approve, url.Values{"csrf": {token("vera")}}, nil, http.StatusForbidden},
				{"approver without a CSRF token", sessions["carol"], approve, url.Values{}, nil, http.StatusForbidden},
				{"approver with another's CSRF token", sessions["carol"], approve, url.Values{"csrf": {token("adam")}}, nil, http.StatusForbidden},
				{"approver with a forged CSRF token", sessions["carol"], approve, url.Values{"csrf": {"AAAA"}}, nil, http.StatusForbidden},
				{"cross-site (Sec-Fetch-Site)", sessions["carol"], approve, url.Values{"csrf": {token("carol")}},
					http.Header{"Sec-Fetch-Site": {"cross-site"}, "Origin": {"https://evil.example"}}, http.StatusForbidden},
				{"another Origin", sessions["carol"], approve, url.Values{"csrf": {token("carol")}}, evil, http.StatusForbidden},
				{"another site's Referer", sessions["carol"], approve, url.Values{"csrf": {token("carol")}},
					http.Header{"Referer": {"https://evil.example/page"}}, http.StatusForbidden},
				{"a session cookie and no Origin or Referer", sessions["carol"], approve, url.Values{"csrf": {token("carol")}},
					http.Header{}, http.StatusForbidden},
				{"anonymous", f.client(t, ""), approve, url.Values{}, nil, http.StatusUnauthorized},
				{"approver rolling back (admin only)", sessions["carol"], "/actions/" + f.applied[0] + "/rollback",
					url.Values{"csrf": {token("carol")}}, nil, http.StatusForbidden},
				{"viewer waiving", sessions["vera"], "/findings/waive", url.Values{"csrf": {token("vera")}}, nil, http.StatusForbidden},
				{"approver revoking a token (admin only)", sessions["carol"], "/tokens/tok-00000000/revoke",
					url.Values{"csrf": {token("carol")}}, nil, http.StatusForbidden},
				{"bearer token without the CSRF token", bearer, approve, url.Values{}, http.Header{}, http.StatusForbidden},
				// Too large a form is that, not a form missing its token.
				{"a form over 64 KiB", sessions["carol"], approve, url.Values{"csrf": {token("carol")}, "reason": {strings.Repeat("x", 65<<10)}},
					nil, http.StatusRequestEntityTooLarge},
				{"a login form over 8 KiB", f.client(t, ""), "/login", url.Values{"token": {strings.Repeat("x", 9<<10)}}, nil,
					http.StatusRequestEntityTooLarge},
			}
			for _, tt := range cases {
				h := tt.header
				if h == nil {
					h = tt.c.sameOrigin()
				}
				if r := tt.c.do(http.MethodPost, tt.path, tt.form, h); r.StatusCode != tt.status {
					t.Errorf("%s: %d, want %d\n%.400s", tt.name, r.StatusCode, tt.status, r.body)
				}
			}
			ctx := context.Background()
			if req, err := f.env.Gate.Get(ctx, id); err != nil || req.State != gates.StatePending || len(req.Decisions) != 0 {
				t.Fatalf("after the refusals: %+v %v; want pending and undecided", req, err)
			}
			if es := f.audit(t, audit.KindApprovalApproved, id); len(es) != 0 {
				t.Fatalf("refused requests were audited as decisions: %+v", es)
			}

			// The gate's refusals come back to the page that asked.
			refusals := []struct {
				who, path, reason, says string
			}{
				{"alice", approve, "", "the requester of an action cannot decide its approval"},
				{"carol", "/approvals/" + id + "/deny", "", "a deny needs a reason"},
				{"carol", "/approvals/apr-000000000000/approve", "", "no such approval request"},
				// One limit for a reason, whatever the channel: the gate's, which Slack's
				// dialog and this page's field say too.
				{"carol", "/approvals/" + id + "/deny", strings.Repeat("é", gates.MaxReason+1), "the reason is longer than 500 characters"},
			}
			for _, rf := range refusals {
				c := sessions[rf.who]
				r := c.post(rf.path, url.Values{"csrf": {token(rf.who)}, "reason": {rf.reason}})
				if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/approvals" {
					t.Errorf("%s %s: %d %q", rf.who, rf.path, r.StatusCode, r.Header.Get("Location"))
				}
				if page := c.get("/approvals"); !strings.Contains(page.body, rf.says) || !strings.Contains(page.body, `class="flash error"`) {
					t.Errorf("%s %s: the page does not say %q", rf.who, rf.path, rf.says)
				}
			}

			// A bearer token (an API client) sends no Origin: its CSRF token is enough.
			r := bearer.do(http.MethodPost, approve, url.Values{"csrf": {bearer.csrf("/approvals")}, "reason": {"CHG-7"}}, http.Header{})
			if r.StatusCode != http.StatusSeeOther {
				t.Fatalf("carol approves: %d\n%s", r.StatusCode, r.body)
			}
			req, err := f.env.Gate.Get(ctx, id)
			if err != nil || req.State != gates.StateApproved {
				t.Fatalf("after carol's approval: %+v %v", req, err)
			}
			if d, ok := req.DecisionBy("carol"); !ok || d.Channel != gates.ChannelWeb || d.Reason != "CHG-7" {
				t.Errorf("decision %+v", req.Decisions)
			}
			es := f.audit(t, audit.KindApprovalApproved, id)
			if len(es) != 1 || es[0].Actor != "carol" || !strings.Contains(string(es[0].Data), `"channel":"web"`) {
				t.Fatalf("audit of the approval: %+v", es)
			}
			if page := bearer.get("/approvals"); !strings.Contains(page.body, "Recorded: you approved request "+id) {
				t.Errorf("no confirmation on the page")
			}
			sessions["carol"].post(approve, url.Values{"csrf": {token("carol")}})
			// One sentence, the request named once.
			if page := sessions["carol"].get("/approvals"); !strings.Contains(page.body, "Refused: you (carol) cannot approve request "+id+": already decided (carol approved it at ") ||
				strings.Contains(page.body, "request "+id+": approve request") {
				t.Errorf("a second decision is not refused on the page in one sentence:\n%s", page.body)
			}
		})
	}
}

// An approver waives a finding from the page: the waiver is added to the waiver file
// the CLI reads (which still parses, with the new waiver in it), audited, and the next
// scan with that file waives the finding.
func TestWaive_addsToTheWaiverFile(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := small(t, dsn(t))
			if err := os.WriteFile(f.waivers, []byte("# reviewed by the security team\nwaivers: []\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			fs, err := f.env.Store.Findings(context.Background(), 1)
			if err != nil || len(fs) == 0 {
				t.Fatalf("findings of scan 1: %d, %v", len(fs), err)
			}
			var target findings.Finding
			for _, x := range fs {
				if x.Status == findings.StatusOpen {
					target = x
					break
				}
			}
			c := f.client(t, "")
			c.login(f.tokens["carol"])
			expires := f.env.Now().UTC().AddDate(0, 1, 0).Format(time.DateOnly)
			form := url.Values{"csrf": {c.csrf("/findings")}, "policy": {target.Policy}, "resource": {target.Resource},
				"fingerprint": {target.Fingerprint}, "reason": {"compensating control: network ACL"}, "expires": {expires}, "back": {"/findings?status=open"}}
			bad := []struct {
				name  string
				field string
				value string
				says  string
			}{
				{"no reason", "reason", "", "needs a reason"},
				{"a past expiry", "expires", "2020-01-01", "is past"},
				{"too far", "expires", f.env.Now().UTC().AddDate(2, 0, 0).Format(time.DateOnly), "a year at most"},
				{"a glob", "resource", "arn:*", "a glob is a reviewed edit"},
				{"an unknown policy", "policy", "WARDEN-NOPE-001", "unknown policy"},
			}
			for _, b := range bad {
				fm := url.Values{}
				for k, v := range form {
					fm[k] = v
				}
				fm.Set(b.field, b.value)
				c.post("/findings/waive", fm)
				if page := c.get("/findings"); !strings.Contains(page.body, b.says) {
					t.Errorf("%s: the page does not say %q", b.name, b.says)
				}
			}
			// A waiver file warden cannot read (a folder stands in its place, which fails
			// even for root): the page says so without the server's paths, which go to
			// the log.
			saved, err := os.ReadFile(f.waivers)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(f.waivers); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(f.waivers, 0o700); err != nil {
				t.Fatal(err)
			}
			c.post("/findings/waive", form)
			page := c.get("/findings").body
			if err := os.Remove(f.waivers); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.waivers, saved, 0o640); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f.waivers, 0o640); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(page, "could not update its waiver file") || strings.Contains(page, filepath.Dir(f.waivers)) {
				t.Errorf("a failed edit: the page does not say so, or shows the server's path:\n%s", page)
			}
			if r := c.post("/findings/waive", form); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/findings?status=open" {
				t.Fatalf("waive: %d %q", r.StatusCode, r.Header.Get("Location"))
			}
			b, _ := os.ReadFile(f.waivers)
			set, err := waivers.Parse(b, f.waivers)
			if err != nil || len(set.Waivers) != 1 || !strings.Contains(string(b), "# reviewed by the security team") {
				t.Fatalf("the waiver file after the page's edit (%v):\n%s", err, b)
			}
			w := set.Waivers[0]
			if w.Policy != target.Policy || w.Resource != target.Resource || w.Owner != "carol" || w.Expires.Format(time.DateOnly) <= expires {
				t.Errorf("waiver %+v", w)
			}
			if st, _ := os.Stat(f.waivers); st.Mode().Perm() != 0o640 {
				t.Errorf("the file's mode changed to %v", st.Mode().Perm())
			}
			es := f.audit(t, dashboard.KindWaiverAdded, target.Fingerprint)
			var data map[string]any
			if len(es) != 1 || es[0].Actor != "carol" || json.Unmarshal(es[0].Data, &data) != nil || data["policy"] != target.Policy {
				t.Fatalf("audit of the waiver: %+v", es)
			}
			res, err := scan.Run(context.Background(), scan.Request{Source: scan.File(acmeSnapshot), Engine: f.env.Engine, Waivers: set,
				Now: f.env.Now()})
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range res.Findings {
				if x.Fingerprint == target.Fingerprint && x.Status != findings.StatusWaived {
					t.Errorf("the next scan: finding %s is %s, want waived", x.Fingerprint, x.Status)
				}
			}
		})
	}
}

// An admin rolls an applied fix back from the page through warden's rollback: the
// cloud is back to the before-state, the action is rolled back, and the audit log names
// the admin.
func TestRollback_fromThePage(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	id := f.applied[0]
	c := f.client(t, "")
	c.login(f.tokens["adam"])
	if page := c.get("/actions?state=applied"); !strings.Contains(page.body, `id="rollback-`+id+`"`) {
		t.Fatalf("no rollback button for %s:\n%s", id, page.body)
	}
	if r := c.post("/actions/"+id+"/rollback", url.Values{"csrf": {c.csrf("/actions")}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("rollback: %d", r.StatusCode)
	}
	rec, err := f.env.Machine("x", remediate.Limits{}).Action(context.Background(), id)
	if err != nil || rec.State != remediate.StateRolledBack {
		t.Fatalf("after the rollback: %+v %v\n%s", rec, err, c.get("/actions").body)
	}
	es := f.audit(t, audit.KindActionRolledBack, id)
	if len(es) != 1 || es[0].Actor != "adam" {
		t.Errorf("audit: %+v", es)
	}
	if page := c.get("/actions"); !strings.Contains(page.body, "rolled back: the before-state is restored") {
		t.Errorf("no outcome on the page")
	}
	f.verifyAudit(t)
}
