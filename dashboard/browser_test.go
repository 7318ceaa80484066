package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store/storetest"
)

// startBrowser starts one headless Chromium (Debian's /usr/bin/chromium) for the test.
// Without Chromium the test is skipped, except under CI (CI set), where .ci/run installs
// it: there a missing browser is a failure, not a silent skip.
func startBrowser(t *testing.T) context.Context {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("chromium is not installed, and CI is set: .ci/run installs it (%v)", err)
		}
		t.Skip("chromium not installed (apt-get install chromium): the browser tests need it")
	}
	var out syncBuffer
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.WindowSize(1280, 900),
		chromedp.CombinedOutput(&out),
		chromedp.UserDataDir(t.TempDir()),
		// chromedp adds --no-sandbox by itself when running as root; said here too.
		chromedp.NoSandbox,
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser: no timeout on this context
		t.Fatalf("start chromium: %v\n%s", err, out.String())
	}
	return ctx
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// tab is one visitor in the browser: a tab in its own browser context (its own cookie
// jar), with everything the pages write to the console.
type tab struct {
	t    *testing.T
	name string
	ctx  context.Context
	base string

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

func newTab(t *testing.T, browser context.Context, name, base string) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	tb := &tab{t: t, name: name, ctx: ctx, base: base}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.console = append(tb.console, m)
			tb.mu.Unlock()
		}
	}()
	return tb
}

// run runs steps with a timeout, failing the test on an error.
func (tb *tab) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("%s: %s: %v", tb.name, what, err)
	}
}

func value[T any](tb *tab, what string, a chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		tb.t.Fatalf("%s: %s: %v", tb.name, what, err)
	}
	return v
}

// errors returns the console's errors and exceptions so far, and forgets them.
func (tb *tab) errors() []string {
	// Console events arrive asynchronously: give the last page's a moment.
	time.Sleep(100 * time.Millisecond)
	tb.mu.Lock()
	defer tb.mu.Unlock()
	var out []string
	for _, m := range tb.console {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			out = append(out, m.String()+" ("+m.URL+")")
		}
	}
	tb.console = nil
	return out
}

// login logs in through the login form, as a person would.
func (tb *tab) login(token string) {
	tb.t.Helper()
	tb.run("open the login form", chromedp.Navigate(tb.base+"/login"), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token))
	value(tb, "log in", chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.ID("login"))))
	tb.run("see the overview", chromedp.WaitVisible(chromedp.ID("whoami")))
}

// screenshot saves the whole page as NAME.png in the test's artifact directory.
func (tb *tab) screenshot(name string) {
	tb.t.Helper()
	png := value(tb, "screenshot", chromedp.FullScreenshot(100))
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		tb.t.Fatalf("%s: screenshot %s is not a PNG", tb.name, name)
	}
	if err := os.WriteFile(filepath.Join(tb.t.ArtifactDir(), name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// post makes the page itself send a POST (what a forged form or script would), and
// returns the status.
func (tb *tab) post(path, body string) int {
	tb.t.Helper()
	js := fmt.Sprintf(`fetch(%q, {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"}, body: %s}).then(r => r.status)`, path, body)
	return value(tb, "POST "+path, chromedp.Evaluate[int](js, chromedp.EvalAwaitPromise))
}

// The dashboard in headless Chromium over the acme organisation: every page renders for
// every role with no console error (so nothing broke the CSP) and is photographed; an
// approver approves a pending fix end to end through the page; a viewer has no buttons
// and a forged POST of theirs is refused; a POST without the CSRF token is refused.
func TestBrowser_acme(t *testing.T) {
	browser := startBrowser(t)
	f := newFixture(t, storetest.Backends(t)["sqlite"](t), fixtureOptions{world: acmeWorld(t),
		config: dashboard.Config{Auth: dashboard.AuthRequired}, scans: []string{acmeSnapshot, acmeSnapshot}, reports: true})
	ctx := context.Background()
	// A request one approval decides (critical ones want two).
	var id string
	for _, p := range f.pending {
		if r, err := f.env.Gate.Get(ctx, p); err == nil && r.Quorum == 1 {
			id = p
			break
		}
	}
	if id == "" || len(f.pending) < 2 {
		t.Fatalf("apply made %d approval requests (%v), want two or more and one with a quorum of 1", len(f.pending), f.pending)
	}
	t.Logf("%d pending requests, %d fixes applied; approving %s", len(f.pending), len(f.applied), id)

	pages := []struct{ path, heading, name string }{
		{"/", "Overview", "overview"}, {"/findings", "Findings", "findings"}, {"/approvals", "Approvals", "approvals"},
		{"/actions", "Actions", "actions"}, {"/audit", "Audit log", "audit"}, {"/reports", "Reports", "reports"},
	}
	roles := []struct {
		who, role string
		extra     []struct{ path, heading, name string }
	}{
		{"vera", "viewer", nil},
		{"carol", "approver", []struct{ path, heading, name string }{{"/findings?severity=high", "Findings", "findings-high"}}},
		{"adam", "admin", []struct{ path, heading, name string }{{"/tokens", "Tokens", "tokens"}}},
	}
	tabs := map[string]*tab{}
	for _, r := range roles {
		tb := newTab(t, browser, r.who, f.srv.URL)
		tabs[r.who] = tb
		tb.login(f.tokens[r.who])
		for _, p := range append(pages, r.extra...) {
			tb.run("open "+p.path, chromedp.Navigate(f.srv.URL+p.path), chromedp.WaitVisible(chromedp.CSS("main h1")))
			if h := value(tb, "heading", chromedp.Text(chromedp.CSS("main h1"))); h != p.heading {
				t.Errorf("%s: %s: heading %q, want %q", r.who, p.path, h, p.heading)
			}
			if role := value(tb, "role", chromedp.Text(chromedp.CSS(".who .role"))); role != r.role {
				t.Errorf("%s: %s: shown as %q, want %q", r.who, p.path, role, r.role)
			}
			tb.screenshot(r.role + "-" + p.name)
			if errs := tb.errors(); len(errs) > 0 {
				t.Errorf("%s: %s: console errors:\n%s", r.who, p.path, strings.Join(errs, "\n"))
			}
		}
	}

	// The overview draws its charts; the reports page offers the downloads.
	carol := tabs["carol"]
	carol.run("overview", chromedp.Navigate(f.srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("score")))
	if n := value(carol, "chart bars", chromedp.Evaluate[int](`document.querySelectorAll("figure.chart svg rect").length`)); n == 0 {
		t.Error("the overview draws no chart")
	}
	carol.run("reports", chromedp.Navigate(f.srv.URL+"/reports"), chromedp.WaitVisible(chromedp.CSS(`[id="fw-cis-aws-3.0"]`)))
	if code := value(carol, "download", chromedp.Evaluate[int](`fetch("/reports/cis-aws-3.0/json").then(r => r.status)`, chromedp.EvalAwaitPromise)); code != 200 {
		t.Errorf("report download: %d", code)
	}

	// The approver approves through the page (htmx posts the form; without JS it posts
	// itself), and sees the outcome.
	carol.run("open the approvals", chromedp.Navigate(f.srv.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("req-"+id)))
	if n := value(carol, "rows", chromedp.Evaluate[int](`document.querySelectorAll("details.req").length`)); n != len(f.pending) {
		t.Errorf("the approvals page shows %d rows, want the %d pending requests", n, len(f.pending))
	}
	carol.screenshot("approver-approvals-before")
	// A row is compact until opened: its details hold the change and the buttons.
	carol.run("open the row", chromedp.Click(chromedp.CSS(`[id="req-`+id+`"] > summary strong`)), chromedp.WaitVisible(chromedp.ID("approve-"+id)))
	carol.screenshot("approver-approvals-open")
	carol.run("approve", chromedp.SendKeys(chromedp.CSS(`form[action="/approvals/`+id+`/approve"] input[name="reason"]`), "CHG-2041"),
		chromedp.Click(chromedp.ID("approve-"+id)), chromedp.WaitVisible(chromedp.CSS("p.flash")))
	if msg := value(carol, "flash", chromedp.Text(chromedp.CSS("p.flash"))); !strings.Contains(msg, "Recorded: you approved request "+id) {
		t.Errorf("after approving: %q", msg)
	}
	carol.screenshot("approver-approvals-after")
	if errs := carol.errors(); len(errs) > 0 {
		t.Errorf("approving: console errors:\n%s", strings.Join(errs, "\n"))
	}
	req, err := f.env.Gate.Get(ctx, id)
	if err != nil || req.State != gates.StateApproved {
		t.Fatalf("request %s after the browser's approval: %+v %v", id, req, err)
	}
	if d, ok := req.DecisionBy("carol"); !ok || d.Channel != gates.ChannelWeb || d.Reason != "CHG-2041" {
		t.Errorf("decision: %+v", req.Decisions)
	}
	es := f.audit(t, audit.KindApprovalApproved, id)
	if len(es) != 1 || es[0].Actor != "carol" || !strings.Contains(string(es[0].Data), `"channel":"web"`) || !strings.Contains(string(es[0].Data), "CHG-2041") {
		t.Fatalf("the audit log's record of the decision: %+v", es)
	}

	// Another pending request, for the refusals.
	other := ""
	for _, p := range f.pending {
		if p != id {
			other = p
			break
		}
	}
	vera := tabs["vera"]
	vera.run("viewer opens the approvals", chromedp.Navigate(f.srv.URL+"/approvals"), chromedp.WaitVisible(chromedp.ID("req-"+other)))
	if n := value(vera, "buttons", chromedp.Evaluate[int](`document.querySelectorAll("button.approve, button.deny").length`)); n != 0 {
		t.Errorf("the viewer sees %d approve or deny buttons", n)
	}
	vera.screenshot("viewer-approvals")
	// The viewer's own page gives her a valid CSRF token (the logout form's): the role
	// still refuses her.
	if code := vera.post("/approvals/"+other+"/approve", `"csrf=" + encodeURIComponent(document.querySelector("input[name=csrf]").value)`); code != 403 {
		t.Errorf("a viewer's forged approval: %d, want 403", code)
	}
	if code := carol.post("/approvals/"+other+"/approve", `"reason=no+token"`); code != 403 {
		t.Errorf("an approval without the CSRF token: %d, want 403", code)
	}
	if req, err := f.env.Gate.Get(ctx, other); err != nil || req.State != gates.StatePending || len(req.Decisions) != 0 {
		t.Errorf("request %s after the refused posts: %+v %v", other, req, err)
	}

	// Several at once: two ticked rows of the grouped page, approved behind one
	// confirmation that lists them; the first POST decides nothing.
	var two []string
	for _, p := range f.pending {
		if p != id && len(two) < 2 {
			two = append(two, p)
		}
	}
	carol.errors() // the refused POST above logged its 403
	carol.run("group by policy", chromedp.Navigate(f.srv.URL+"/approvals?group=policy&sort=expiry"), chromedp.WaitVisible(chromedp.CSS("h2.group")))
	carol.screenshot("approver-approvals-grouped")
	for _, p := range two {
		carol.run("tick "+p, chromedp.Click(chromedp.ID("sel-"+p)))
	}
	if n := value(carol, "ticked", chromedp.Evaluate[int](`document.querySelectorAll("input[form=bulk]:checked").length`)); n != 2 {
		t.Fatalf("%d boxes ticked, want 2", n)
	}
	carol.run("approve selected", chromedp.Click(chromedp.ID("bulk-approve")), chromedp.WaitVisible(chromedp.ID("bulk-confirm")))
	if h := value(carol, "heading", chromedp.Text(chromedp.CSS("main h1"))); h != "Confirm: approve 2 requests" {
		t.Errorf("confirmation heading %q", h)
	}
	for _, p := range two {
		if n := value(carol, "listed", chromedp.Evaluate[int](`document.querySelectorAll('tr[id="c-`+p+`"]').length`)); n != 1 {
			t.Errorf("the confirmation does not list %s", p)
		}
		if req, err := f.env.Gate.Get(ctx, p); err != nil || len(req.Decisions) != 0 {
			t.Errorf("%s was decided before the confirmation: %+v %v", p, req, err)
		}
	}
	carol.screenshot("approver-bulk-confirm")
	carol.run("confirm", chromedp.SendKeys(chromedp.CSS(`.confirm-form input[name="reason"]`), "CHG-2042"),
		chromedp.Click(chromedp.ID("bulk-confirm")), chromedp.WaitVisible(chromedp.ID("bulk-summary")))
	if msg := value(carol, "summary", chromedp.Text(chromedp.ID("bulk-summary"))); !strings.HasPrefix(msg, "2 recorded, 0 refused") {
		t.Errorf("after the bulk approval: %q", msg)
	}
	carol.screenshot("approver-bulk-done")
	if errs := carol.errors(); len(errs) > 0 {
		t.Errorf("bulk approval: console errors:\n%s", strings.Join(errs, "\n"))
	}
	for _, p := range two {
		req, err := f.env.Gate.Get(ctx, p)
		if d, ok := req.DecisionBy("carol"); err != nil || !ok || d.Channel != gates.ChannelWeb || d.Reason != "CHG-2042" {
			t.Errorf("%s after the bulk approval: %+v %v", p, req.Decisions, err)
		}
		if es := f.audit(t, audit.KindApprovalApproved, p); len(es) != 1 || es[0].Actor != "carol" {
			t.Errorf("%s: audit %+v", p, es)
		}
	}
	f.verifyAudit(t)
}
