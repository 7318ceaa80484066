package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
)

// warden token create prints the token once, alone on stdout; list never shows it;
// revoke ends it; each change is audited as the CLI's actor; mistakes exit 2.
func TestToken_createListRevoke(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "warden.db")
	cfg := write(t, dir, "warden.yaml", "db: "+db+"\n")
	t.Setenv(audit.ActorEnv, "root")

	if code, _, stderr := warden(t, "", "token", "list", "--db", filepath.Join(dir, "nope.db")); code != exitError || !strings.Contains(stderr, "nope.db") {
		t.Errorf("list on a missing database: exit %d, %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "token", "create", "--role", "root", "--config", cfg); code != exitError || !strings.Contains(stderr, `unknown role "root"`) {
		t.Errorf("a bad role: exit %d, %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "token", "create", "--config", cfg); code != exitError || !strings.Contains(stderr, `"role" not set`) {
		t.Errorf("no role: exit %d, %s", code, stderr)
	}
	code, out, stderr := warden(t, "", "token", "create", "--role", "approver", "--name", "carol", "--config", cfg)
	secret := strings.TrimSpace(out)
	if code != exitOK || !strings.HasPrefix(secret, "wdt_") || strings.Count(out, "\n") != 1 || !strings.Contains(stderr, "for carol (approver)") {
		t.Fatalf("create: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	code, out, _ = warden(t, "", "token", "list", "--config", cfg)
	if code != exitOK || !strings.Contains(out, "carol") || !strings.Contains(out, "approver") || strings.Contains(out, secret) {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	code, out, _ = warden(t, "", "token", "list", "--format", "json", "--config", cfg)
	var doc struct {
		Tokens []dashboard.Token `json:"tokens"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != exitOK || err != nil || len(doc.Tokens) != 1 || strings.Contains(out, secret) {
		t.Fatalf("list --format json: exit %d, %v\n%s", code, err, out)
	}
	id := doc.Tokens[0].ID

	ctx := context.Background()
	st, err := store.OpenExisting(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := dashboard.NewTokens(st, audit.New(st, audit.Options{}), nil)
	if tk, err := ts.Authenticate(ctx, secret); err != nil || tk.Name != "carol" || tk.Role != dashboard.RoleApprover {
		t.Fatalf("the printed token does not authenticate: %+v %v", tk, err)
	}

	t.Setenv(audit.ActorEnv, "adam")
	if code, out, _ := warden(t, "", "token", "revoke", id, "--config", cfg); code != exitOK || !strings.Contains(out, id+" (carol, approver) revoked") {
		t.Fatalf("revoke: exit %d, %s", code, out)
	}
	if code, _, stderr := warden(t, "", "token", "revoke", id, "--config", cfg); code != exitError || !strings.Contains(stderr, "revoked already") {
		t.Errorf("revoke twice: exit %d, %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "token", "revoke", "tok-00000000", "--config", cfg); code != exitError || !strings.Contains(stderr, "no token tok-00000000") {
		t.Errorf("revoke an unknown token: exit %d, %s", code, stderr)
	}
	if _, err := ts.Authenticate(ctx, secret); err == nil {
		t.Error("a revoked token still authenticates")
	}
	es, err := audit.New(st, audit.Options{}).Entries(ctx, 0, 10)
	if err != nil || len(es) != 2 || es[0].Kind != dashboard.KindTokenCreated || es[0].Actor != "root" ||
		es[1].Kind != dashboard.KindTokenRevoked || es[1].Actor != "adam" || es[1].Subject != id {
		t.Fatalf("audit: %+v %v", es, err)
	}
}

// warden serve serves the dashboard at /: with dashboard.auth: required, an anonymous
// visitor is sent to the login form and a token made by warden token create is let in.
func TestToken_serveLetsTheTokenIn(t *testing.T) {
	cr := startChildRun(t, remediatetest.World(1), "serve:\n  listen: 127.0.0.1:0\ndashboard:\n  auth: required\n")
	t.Setenv(audit.ActorEnv, "root")
	code, out, stderr := warden(t, "", "token", "create", "--role", "viewer", "--name", "vera", "--config", cr.cfg, "--db", cr.db)
	if code != exitOK {
		t.Fatalf("create: exit %d, %s", code, stderr)
	}
	secret := strings.TrimSpace(out)
	s := startServeEnv(t, cr.url, cr.args("serve", "--listen", "127.0.0.1:0"))
	wantIn(t, "serve's stderr", s.output(), "dashboard at /")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(auth string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodGet, s.url+"/", nil)
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, _ := get(""); resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Errorf("anonymous GET /: %d %q, want the login form", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, body := get(secret)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, "<h1>Overview</h1>") || !strings.Contains(body, `id="whoami">vera<`) {
		t.Errorf("GET / with vera's token: %d\n%.500s", resp.StatusCode, body)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	s.stop(t)
}
