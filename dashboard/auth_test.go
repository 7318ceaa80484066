package dashboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

var acmeSnapshot = filepath.Join("..", "fixtures", "acme", "snapshot.json")

// small is a fixture over a one-account world (fast to collect and plan), with the acme
// snapshot in the history for the findings pages.
func small(t *testing.T, dsn string) *fixture {
	return newFixture(t, dsn, fixtureOptions{world: remediatetest.World(2), config: dashboard.Config{Auth: dashboard.AuthRequired},
		scans: []string{acmeSnapshot}})
}

var pagePaths = []string{"/", "/findings", "/approvals", "/actions", "/audit", "/reports"}

// Every page answers by role: anonymous visitors are sent to the login form, unknown
// tokens get 401, tokens below the page's role 403; and every answer carries the
// security headers.
func TestPages_byRole(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := small(t, dsn(t))
			ctx := context.Background()
			revoked, secret, err := f.d.Tokens().Create(ctx, "rex", dashboard.RoleAdmin, "root")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.d.Tokens().Revoke(ctx, revoked.ID, "root"); err != nil {
				t.Fatal(err)
			}
			type want struct {
				status   int
				location string
			}
			cases := []struct {
				who   string
				token string
				paths []string
				want  want
			}{
				{"anonymous", "", pagePaths, want{http.StatusSeeOther, "/login"}},
				{"unknown token", "wdt_" + strings.Repeat("A", 43), pagePaths, want{status: http.StatusUnauthorized}},
				{"not a bearer token", "x", []string{"/"}, want{status: http.StatusUnauthorized}},
				{"revoked token", secret, pagePaths, want{status: http.StatusUnauthorized}},
				{"viewer", f.tokens["vera"], pagePaths, want{status: http.StatusOK}},
				{"viewer on the tokens page", f.tokens["vera"], []string{"/tokens"}, want{status: http.StatusForbidden}},
				{"approver on the tokens page", f.tokens["carol"], []string{"/tokens"}, want{status: http.StatusForbidden}},
				{"admin", f.tokens["adam"], append([]string{"/tokens"}, pagePaths...), want{status: http.StatusOK}},
				{"anyone: the login form", "", []string{"/login"}, want{status: http.StatusOK}},
				{"no such page", f.tokens["vera"], []string{"/nope"}, want{status: http.StatusNotFound}},
			}
			for _, tt := range cases {
				c := f.client(t, "")
				if tt.token != "" {
					c.header.Set("Authorization", "Bearer "+tt.token)
				}
				for _, path := range tt.paths {
					r := c.get(path)
					if r.StatusCode != tt.want.status || tt.want.location != "" && r.Header.Get("Location") != tt.want.location {
						t.Errorf("%s: GET %s = %d (Location %q), want %d %q\n%.600s", tt.who, path, r.StatusCode, r.Header.Get("Location"),
							tt.want.status, tt.want.location, r.body)
					}
					checkHeaders(t, tt.who+" GET "+path, r)
					if r.StatusCode == http.StatusOK && (!strings.Contains(r.body, "</html>") || strings.Contains(r.body, "internal error")) {
						t.Errorf("%s: GET %s: the page did not render whole:\n%s", tt.who, path, r.body)
					}
				}
			}
		})
	}
}

func checkHeaders(t *testing.T, what string, r response) {
	t.Helper()
	for h, want := range map[string]string{
		"Content-Security-Policy": "script-src 'self'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
	} {
		if !strings.Contains(r.Header.Get(h), want) {
			t.Errorf("%s: %s = %q, want it to hold %q", what, h, r.Header.Get(h), want)
		}
	}
	if strings.Contains(r.Header.Get("Content-Security-Policy"), "unsafe-inline") {
		t.Errorf("%s: the CSP allows inline code: %s", what, r.Header.Get("Content-Security-Policy"))
	}
}

// The vendored htmx is the pinned release, served from the binary to anyone (it is
// public code), with its licence beside it.
func TestStatic_htmxPinned(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	r := f.client(t, "").get("/static/htmx.min.js")
	sum := sha256.Sum256([]byte(r.body))
	const want = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717" // htmx.org 2.0.11, dist/htmx.min.js
	if r.StatusCode != http.StatusOK || hex.EncodeToString(sum[:]) != want {
		t.Fatalf("GET /static/htmx.min.js: %d, sha256 %x, want 200 and %s", r.StatusCode, sum, want)
	}
	if ct := r.Header.Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("Content-Type %q", ct)
	}
	checkHeaders(t, "htmx", r)
	if lic := f.client(t, "").get("/static/htmx.LICENSE"); !strings.Contains(lic.body, "Zero-Clause BSD") {
		t.Errorf("the licence is not served: %d %.100s", lic.StatusCode, lic.body)
	}
}

// A token is exchanged for a session at the login form: the cookie is HttpOnly and
// SameSite=Strict (Secure is left off on loopback only), the session acts as the token,
// logout ends it, and revoking the token ends its sessions. The form itself refuses a
// post without its CSRF token, and a bad token.
func TestLogin_session(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := small(t, dsn(t))
			c := f.client(t, "")
			if r := c.post("/login", url.Values{"token": {f.tokens["carol"]}}); r.StatusCode != http.StatusForbidden {
				t.Errorf("login without a CSRF token: %d, want 403", r.StatusCode)
			}
			if r := c.login("wdt_nope"); r.StatusCode != http.StatusUnauthorized || !strings.Contains(r.body, "unknown or revoked") {
				t.Errorf("login with a bad token: %d\n%s", r.StatusCode, r.body)
			}
			r := c.login(f.tokens["carol"])
			if r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
				t.Fatalf("login: %d %q\n%s", r.StatusCode, r.Header.Get("Location"), r.body)
			}
			var session *http.Cookie
			for _, ck := range r.Cookies() {
				if ck.Name == "warden_session" {
					session = ck
				}
			}
			if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Secure || session.MaxAge <= 0 {
				t.Fatalf("session cookie %+v: want HttpOnly, SameSite=Strict, not Secure on loopback, with a lifetime", session)
			}
			if session.Value == f.tokens["carol"] || strings.Contains(session.Value, f.tokens["carol"]) {
				t.Fatal("the session cookie carries the token")
			}
			page := c.get("/approvals")
			if page.StatusCode != http.StatusOK || !strings.Contains(page.body, `id="whoami">carol<`) {
				t.Fatalf("with the session: %d\n%.500s", page.StatusCode, page.body)
			}
			if r := c.post("/logout", url.Values{"csrf": {c.csrf("/")}}); r.StatusCode != http.StatusSeeOther {
				t.Fatalf("logout: %d", r.StatusCode)
			}
			// The old cookie, replayed, no longer works.
			replay := f.client(t, "")
			replay.header.Set("Cookie", "warden_session="+session.Value)
			if r := replay.get("/"); r.StatusCode != http.StatusSeeOther {
				t.Errorf("a logged-out session: %d, want the login form", r.StatusCode)
			}
			// A revoked token ends the sessions it opened.
			c2 := f.client(t, "")
			c2.login(f.tokens["vera"])
			if r := c2.get("/"); r.StatusCode != http.StatusOK {
				t.Fatalf("vera's session: %d", r.StatusCode)
			}
			list, _ := f.d.Tokens().List(context.Background())
			for _, tk := range list {
				if tk.Name == "vera" {
					if _, err := f.d.Tokens().Revoke(context.Background(), tk.ID, "root"); err != nil {
						t.Fatal(err)
					}
				}
			}
			if r := c2.get("/"); r.StatusCode != http.StatusSeeOther {
				t.Errorf("a revoked token's session: %d, want the login form", r.StatusCode)
			}
		})
	}
}

// No page ever holds a token, a session secret or the binding cookie.
func TestPages_noSecrets(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	c := f.client(t, "")
	c.login(f.tokens["adam"])
	secrets := []string{}
	for _, s := range f.tokens {
		secrets = append(secrets, s)
	}
	u, _ := url.Parse(f.srv.URL)
	for _, ck := range c.hc.Jar.Cookies(u) {
		secrets = append(secrets, ck.Value)
	}
	if len(secrets) < len(f.tokens)+2 {
		t.Fatalf("want the session and binding cookies too, have %d secrets", len(secrets))
	}
	for _, path := range append([]string{"/tokens", "/login"}, pagePaths...) {
		r := c.get(path)
		for _, s := range secrets {
			if strings.Contains(r.body, s) {
				t.Errorf("GET %s shows a secret", path)
			}
		}
	}
}

// Identities from an authenticating proxy are believed only from its addresses, with
// the role of the user's groups; a user whose groups map to no role is refused.
func TestProxy_identity(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	proxy := func(prefix string) *fixture {
		return f.serve(t, f.options(dashboard.Config{Auth: dashboard.AuthRequired, Proxy: &dashboard.ProxyConfig{
			UserHeader: "X-Forwarded-Email", GroupsHeader: "X-Forwarded-Groups",
			TrustedProxies: []netip.Prefix{netip.MustParsePrefix(prefix)},
			Roles:          map[string]dashboard.Role{"sec-oncall": dashboard.RoleApprover, "eng": dashboard.RoleViewer}}}))
	}
	trusted, untrusted := proxy("127.0.0.0/8"), proxy("10.0.0.0/8")
	cases := []struct {
		name   string
		f      *fixture
		groups string
		status int
		role   string
	}{
		{"trusted, approver group", trusted, "eng, sec-oncall", http.StatusOK, "approver"},
		{"trusted, viewer group", trusted, "eng", http.StatusOK, "viewer"},
		{"trusted, no mapped group", trusted, "sales", http.StatusForbidden, ""},
		{"untrusted address", untrusted, "sec-oncall", http.StatusSeeOther, ""},
	}
	for _, tt := range cases {
		c := tt.f.client(t, "")
		c.header.Set("X-Forwarded-Email", "pat@acme.example")
		c.header.Set("X-Forwarded-Groups", tt.groups)
		r := c.get("/approvals")
		if r.StatusCode != tt.status || tt.role != "" && !strings.Contains(r.body, `<span class="role">`+tt.role+`</span>`) {
			t.Errorf("%s: %d, want %d as %q\n%.400s", tt.name, r.StatusCode, tt.status, tt.role, r.body)
		}
	}
	// The proxy's approver decides, with a CSRF token bound to the browser's cookie.
	c := trusted.client(t, "")
	c.header.Set("X-Forwarded-Email", "pat@acme.example")
	c.header.Set("X-Forwarded-Groups", "sec-oncall")
	id := f.pending[0]
	if r := c.post("/approvals/"+id+"/approve", url.Values{"csrf": {c.csrf("/approvals")}}); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve through the proxy: %d\n%s", r.StatusCode, r.body)
	}
	req, err := f.env.Gate.Get(context.Background(), id)
	if d, ok := req.DecisionBy("pat@acme.example"); err != nil || !ok || d.Channel != gates.ChannelWeb {
		t.Errorf("decision by the proxy's user: %+v %v", req.Decisions, err)
	}
}

// Authentication off is refused unless the server listens on loopback; on loopback the
// page says it is off, and the local operator decides as the CLI's user does: their
// identity must be in gates.approvers.
func TestAuthOff(t *testing.T) {
	f := small(t, storetest.Backends(t)["sqlite"](t))
	o := f.options(dashboard.Config{Auth: dashboard.AuthOff})
	o.Loopback = false
	if _, err := dashboard.New(o); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("auth off beyond loopback: %v", err)
	}
	if _, err := dashboard.New(f.options(dashboard.Config{})); err != nil {
		t.Fatalf("auto on loopback: %v", err)
	}
	local := f.serve(t, f.options(dashboard.Config{Auth: dashboard.AuthOff}))
	c := local.client(t, "")
	r := c.get("/approvals")
	if r.StatusCode != http.StatusOK || !strings.Contains(r.body, `id="auth-off"`) {
		t.Fatalf("auth off: %d\n%.500s", r.StatusCode, r.body)
	}
	o = f.options(dashboard.Config{Auth: dashboard.AuthOff})
	o.LocalActor = "mallory"
	mallory := f.serve(t, o).client(t, "")
	id := f.pending[1]
	mallory.post("/approvals/"+id+"/approve", url.Values{"csrf": {mallory.csrf("/approvals")}})
	if r := mallory.get("/approvals"); !strings.Contains(r.body, "not an approver: mallory is not in gates.approvers") {
		t.Errorf("mallory, not in gates.approvers: no refusal shown\n%s", r.body)
	}
	c.post("/approvals/"+id+"/approve", url.Values{"csrf": {c.csrf("/approvals")}})
	req, _ := f.env.Gate.Get(context.Background(), id)
	if _, ok := req.DecisionBy("carol"); !ok || len(req.Decisions) != 1 {
		t.Errorf("the local operator carol (an approver) did not decide: %+v", req.Decisions)
	}
}

// With the daemon's state in the store, the pages show it rather than the history:
// the overview counts the findings it resolved and how long they stayed open, and the
// findings page lists the resolved ones on request.
func TestOverview_daemonState(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, dsn(t), fixtureOptions{world: remediatetest.World(1), config: dashboard.Config{Auth: dashboard.AuthRequired},
				scans: []string{acmeSnapshot}, daemon: true})
			c := f.client(t, f.tokens["vera"])
			page := c.get("/")
			for _, want := range []string{"the daemon&#39;s state", "Time to converge"} {
				if !strings.Contains(page.body, want) {
					t.Errorf("overview: no %q", want)
				}
			}
			if !regexp.MustCompile(`[1-9][0-9]* resolved`).MatchString(page.body) {
				t.Error("overview: no resolved finding counted")
			}
			if strings.Contains(page.body, "<dt>Time to converge (median, resolved findings)</dt><dd>—</dd>") {
				t.Error("overview: no time to converge for the resolved finding")
			}
			resolved := c.get("/findings?status=resolved")
			if strings.Contains(resolved.body, `status-open"`) || !strings.Contains(resolved.body, "account-password-policy") {
				t.Errorf("resolved findings:\n%s", resolved.body)
			}
			if open := c.get("/findings"); strings.Contains(open.body, "account-password-policy") {
				t.Error("the default listing shows the resolved finding")
			}
		})
	}
}
