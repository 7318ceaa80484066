package dashboard_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/compliance/render"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
)

// fixture is a dashboard over a real store, audit log, gate and remediation machine
// against the simulator, served by a real HTTP server, with a token per role.
type fixture struct {
	env *remediatetest.Env
	d   *dashboard.Dashboard
	srv *httptest.Server
	// tokens by name: vera (viewer), carol (approver), alice (approver, who requested
	// the fixes), adam (admin).
	tokens map[string]string
	// pending are the ids of the approval requests apply made; applied the ids of the
	// actions it applied unattended.
	pending, applied []string
	waivers          string
	// verifier checks the checkpoint the fixture signed.
	verifier note.Verifier
}

type fixtureOptions struct {
	world  *cloudsim.World
	config dashboard.Config
	// scans are snapshot files recorded in the history, in order.
	scans []string
	// reports wires the report downloads (compliance/evidence and compliance/render).
	reports bool
	// daemon has the daemon's reconciler read the world an hour before the fixes are
	// applied and again after: its findings state (finding_state) then holds the fixed
	// findings as resolved.
	daemon bool
}

// observe has the daemon's reconciler read every scope of the world, as of at.
func observe(t testing.TB, env *remediatetest.Env, at time.Time) {
	t.Helper()
	ctx := context.Background()
	rec := reconcile.New(reconcile.Options{Store: env.Store, Log: env.Log, Engine: env.Engine, Now: env.Now})
	var sink collectors.MemorySink
	if err := env.Reader.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	for _, sc := range sink.Scopes {
		var rs []snapshot.Resource
		for _, r := range sink.Resources {
			if r.Scope == sc.ID {
				rs = append(rs, r)
			}
		}
		if _, err := rec.Observe(ctx, reconcile.Observation{Scope: sc, Resources: rs, Accounts: env.Accounts, At: at}); err != nil {
			t.Fatal(err)
		}
	}
}

// acmeWorld is the acme organisation as a simulator world.
func acmeWorld(t testing.TB) *cloudsim.World {
	t.Helper()
	w, err := cloudsim.LoadWorld(filepath.Join("..", "fixtures", "acme", "world.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// newFixture records the scans, then plans and applies the world's findings as alice
// through the real path (remediate.Machine.Apply with the gate): low-risk fixes are
// applied, the others become pending approval requests.
func newFixture(t testing.TB, dsn string, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	gcfg := gates.Config{Approvers: []string{"carol"}, Auto: []findings.Risk{findings.RiskLow}, UncheckedNames: true}
	env := remediatetest.Start(t, dsn, o.world, gcfg, remediatetest.Options{})
	for i, snap := range o.scans {
		_, err := scan.Run(ctx, scan.Request{Source: scan.File(snap), Engine: env.Engine, Store: env.Store,
			Now:      time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC).Add(time.Duration(i) * 6 * time.Hour),
			Recorded: scan.Audit(env.Log, "alice")})
		if err != nil {
			t.Fatalf("scan %s: %v", snap, err)
		}
	}
	if o.daemon {
		observe(t, env, env.Now().Add(-time.Hour))
	}
	res, err := env.Machine("alice", remediate.Limits{}).Apply(ctx, env.Plan(t, "alice"), true)
	if err != nil {
		t.Fatal(err)
	}
	if o.daemon {
		observe(t, env, env.Now())
	}
	f := &fixture{env: env, tokens: map[string]string{}, waivers: filepath.Join(t.TempDir(), "waivers.yaml")}
	for _, it := range res.Items {
		switch it.State {
		case remediate.StatePending:
			f.pending = append(f.pending, it.Request)
		case remediate.StateVerified:
			f.applied = append(f.applied, it.Action)
		}
	}
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.New(env.Store, audit.Options{Signer: signer}).Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range env.Engine.Policies() {
		ids = append(ids, p.ID)
	}
	f.verifier = verifier
	do := dashboard.Options{Store: env.Store, Log: env.Log, Gate: env.Gate,
		Actions: env.Machine("warden", remediate.Limits{}),
		Rollback: func(ctx context.Context, actor, id string) (remediate.Item, error) {
			return env.Machine(actor, remediate.Limits{}).Rollback(ctx, id)
		},
		Verifier: verifier, WaiverFile: f.waivers, Policies: ids, Config: o.config, Loopback: true, LocalActor: "carol", Now: env.Now}
	if o.reports {
		do.Formats = render.Formats()
		do.Report = func(ctx context.Context, w io.Writer, framework, format string) error {
			fw, err := compliance.Lookup(framework)
			if err != nil {
				return err
			}
			wr, err := render.New(format)
			if err != nil {
				return err
			}
			doc, err := evidence.Gather(ctx, env.Store, env.Log, fw, evidence.Options{Policies: env.Engine.Policies(), Now: env.Now})
			if err != nil {
				return err
			}
			return wr.Write(w, doc)
		}
	}
	f.d, err = dashboard.New(do)
	if err != nil {
		t.Fatal(err)
	}
	for name, role := range map[string]dashboard.Role{"vera": dashboard.RoleViewer, "carol": dashboard.RoleApprover,
		"alice": dashboard.RoleApprover, "adam": dashboard.RoleAdmin} {
		_, secret, err := f.d.Tokens().Create(ctx, name, role, "root")
		if err != nil {
			t.Fatal(err)
		}
		f.tokens[name] = secret
	}
	f.srv = httptest.NewServer(f.d)
	t.Cleanup(f.srv.Close)
	return f
}

// client is one visitor: a cookie jar, redirects not followed, and optionally a bearer
// token and extra headers on every request.
type client struct {
	t      testing.TB
	base   string
	hc     *http.Client
	bearer string
	header http.Header
}

func (f *fixture) client(t testing.TB, bearer string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: f.srv.URL, bearer: bearer, header: http.Header{},
		hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// response is a request's outcome, its body read.
type response struct {
	*http.Response
	body string
}

func (c *client) do(method, path string, form url.Values, header http.Header) response {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, c.base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return response{resp, string(b)}
}

func (c *client) get(path string) response { c.t.Helper(); return c.do(http.MethodGet, path, nil, nil) }

// sameOrigin is what a browser sends with a form posted from the dashboard's own page.
func (c *client) sameOrigin() http.Header {
	return http.Header{"Origin": {c.base}, "Sec-Fetch-Site": {"same-origin"}}
}

// post submits a form as the dashboard's own pages do.
func (c *client) post(path string, form url.Values) response {
	c.t.Helper()
	return c.do(http.MethodPost, path, form, c.sameOrigin())
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a page as a browser's form would carry it.
func (c *client) csrf(path string) string {
	c.t.Helper()
	r := c.get(path)
	m := csrfField.FindStringSubmatch(r.body)
	if r.StatusCode != http.StatusOK || m == nil {
		c.t.Fatalf("GET %s: %d, no CSRF token in the page:\n%s", path, r.StatusCode, r.body)
	}
	return m[1]
}

// login exchanges the token for a session through the login form, as a browser would.
func (c *client) login(token string) response {
	c.t.Helper()
	return c.post("/login", url.Values{"csrf": {c.csrf("/login")}, "token": {token}})
}

// auditKinds returns the audit entries of a kind about subject.
func (f *fixture) audit(t testing.TB, kind, subject string) []audit.Entry {
	t.Helper()
	es, err := f.env.Log.Entries(context.Background(), 0, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Entry
	for _, e := range es {
		if e.Kind == kind && e.Subject == subject {
			out = append(out, e)
		}
	}
	return out
}

// options are the dashboard options of the fixture, for a second dashboard over the
// same store (another configuration).
func (f *fixture) options(cfg dashboard.Config) dashboard.Options {
	return dashboard.Options{Store: f.env.Store, Log: f.env.Log, Gate: f.env.Gate, Actions: f.env.Machine("warden", remediate.Limits{}),
		WaiverFile: f.waivers, Config: cfg, Loopback: true, LocalActor: "carol", Now: f.env.Now}
}

// serve serves a dashboard with o over the fixture's store, and returns a fixture
// sharing everything else with f.
func (f *fixture) serve(t testing.TB, o dashboard.Options) *fixture {
	t.Helper()
	d, err := dashboard.New(o)
	if err != nil {
		t.Fatal(err)
	}
	g := *f
	g.d, g.srv = d, httptest.NewServer(d)
	t.Cleanup(g.srv.Close)
	return &g
}

// verifyAudit checks the whole audit log against the fixture's checkpoint.
func (f *fixture) verifyAudit(t testing.TB) {
	t.Helper()
	if _, err := f.env.Log.Verify(context.Background(), f.verifier); err != nil {
		t.Fatalf("audit verify: %v", err)
	}
}
