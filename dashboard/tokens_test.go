package dashboard_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/store/storetest"
)

// Tokens: only the hash is kept; a token acts as its name until revoked; a session lasts
// its TTL and ends with its token; names that could pass for another identity are
// refused; creation and revocation are audited, without the secret.
func TestTokens_lifecycle(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := dsn(t)
			st := storetest.Open(t, d)
			var mu sync.Mutex
			now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
			log := audit.New(st, audit.Options{Now: clock})
			ts := dashboard.NewTokens(st, log, clock)

			for _, bad := range []string{"slack:U0AAAAAAA", "warden", "a\nb", strings.Repeat("x", 101)} {
				if _, _, err := ts.Create(ctx, bad, dashboard.RoleViewer, "root"); err == nil {
					t.Errorf("name %q accepted", bad)
				}
			}
			tok, secret, err := ts.Create(ctx, "", dashboard.RoleApprover, "root")
			if err != nil {
				t.Fatal(err)
			}
			if tok.Name != tok.ID || !strings.HasPrefix(secret, "wdt_") || len(secret) < 40 {
				t.Fatalf("token %+v, secret of %d bytes", tok, len(secret))
			}
			db, _ := storetest.RawDB(t, d)
			var stored string
			if err := db.QueryRow(`SELECT hash FROM dashboard_tokens`).Scan(&stored); err != nil || strings.Contains(stored, secret[4:]) || len(stored) != 64 {
				t.Fatalf("stored %q (%v): want the hex SHA-256 only", stored, err)
			}
			got, err := ts.Authenticate(ctx, secret)
			if err != nil || got.Name != tok.Name || got.Role != dashboard.RoleApprover {
				t.Fatalf("authenticate: %+v %v", got, err)
			}
			for _, bad := range []string{"", secret + "x", "wdt_" + strings.Repeat("A", 43), secret[4:]} {
				if _, err := ts.Authenticate(ctx, bad); !errors.Is(err, dashboard.ErrBadToken) {
					t.Errorf("authenticate %q: %v", bad, err)
				}
			}
			_, session, err := ts.StartSession(ctx, secret, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if s, err := ts.Session(ctx, session); err != nil || s.ID != tok.ID {
				t.Fatalf("session: %+v %v", s, err)
			}
			mu.Lock()
			now = now.Add(61 * time.Minute)
			mu.Unlock()
			if _, err := ts.Session(ctx, session); !errors.Is(err, dashboard.ErrBadToken) {
				t.Errorf("an expired session: %v", err)
			}
			_, session, _ = ts.StartSession(ctx, secret, time.Hour)
			if _, err := ts.Revoke(ctx, tok.ID, "adam"); err != nil {
				t.Fatal(err)
			}
			if _, err := ts.Revoke(ctx, tok.ID, "adam"); err == nil || !strings.Contains(err.Error(), "revoked already") {
				t.Errorf("second revocation: %v", err)
			}
			if _, err := ts.Session(ctx, session); !errors.Is(err, dashboard.ErrBadToken) {
				t.Errorf("a revoked token's session: %v", err)
			}
			if _, err := ts.Authenticate(ctx, secret); !errors.Is(err, dashboard.ErrBadToken) {
				t.Errorf("a revoked token: %v", err)
			}
			list, err := ts.List(ctx)
			if err != nil || len(list) != 1 || !list[0].Revoked() || list[0].RevokedBy != "adam" || list[0].LastUsedAt.IsZero() {
				t.Fatalf("list: %+v %v", list, err)
			}
			es, err := log.Entries(ctx, 0, 10)
			if err != nil || len(es) != 2 || es[0].Kind != dashboard.KindTokenCreated || es[1].Kind != dashboard.KindTokenRevoked || es[1].Actor != "adam" {
				t.Fatalf("audit: %+v %v", es, err)
			}
			for _, e := range es {
				if strings.Contains(string(e.Data), secret[4:]) || strings.Contains(string(e.Data), stored) {
					t.Errorf("audit entry %d holds the token or its hash", e.Seq)
				}
			}
		})
	}
}

// The dashboard: section of the config reads with its defaults, and its mistakes are
// placed on their line.
func TestConfig_section(t *testing.T) {
	c, err := config.Parse([]byte(`dashboard:
  auth: required
  session_ttl: 2h
  trusted_origins: [https://warden.example.com]
  proxy:
    user_header: X-Forwarded-Email
    groups_header: X-Forwarded-Groups
    trusted_proxies: [10.0.0.0/8, 192.0.2.7]
    roles: {sec-oncall: approver, eng: viewer}
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dc := c.Dashboard
	if !dc.IsEnabled() || !dc.AuthOn(true) || dc.TTL() != 2*time.Hour || dc.Proxy.Roles["sec-oncall"] != dashboard.RoleApprover ||
		len(dc.Proxy.TrustedProxies) != 2 || dc.Proxy.TrustedProxies[1].String() != "192.0.2.7/32" {
		t.Errorf("parsed %+v %+v", dc, dc.Proxy)
	}
	empty, _ := config.Parse([]byte("db: x.db\n"), "warden.yaml")
	if !empty.Dashboard.IsEnabled() || empty.Dashboard.AuthOn(true) || !empty.Dashboard.AuthOn(false) || empty.Dashboard.TTL() != dashboard.DefaultSessionTTL {
		t.Errorf("defaults: %+v", empty.Dashboard)
	}
	bad := []struct{ yaml, want string }{
		{"dashboard:\n  auth: maybe\n", "line 2: dashboard.auth: \"maybe\": want auto, required or off"},
		{"dashboard:\n  auht: off\n", `line 2: dashboard.auht: unknown key (did you mean "auth"?)`},
		{"dashboard:\n  enabled: yes please\n", "line 2: dashboard.enabled: want true or false"},
		{"dashboard:\n  session_ttl: forever\n", "line 2: dashboard.session_ttl"},
		{"dashboard:\n  trusted_origins: [warden.example.com]\n", "line 2: dashboard.trusted_origins[0]"},
		{"dashboard:\n  proxy:\n    user_header: X-User\n    roles: {a: viewer}\n", "line 2: dashboard.proxy.trusted_proxies: missing"},
		{"dashboard:\n  proxy:\n    user_header: X-User\n    trusted_proxies: [not-an-ip]\n    roles: {a: viewer}\n", "line 4: dashboard.proxy.trusted_proxies[0]"},
		{"dashboard:\n  proxy:\n    user_header: Authorization\n    trusted_proxies: [10.0.0.1]\n    roles: {a: viewer}\n", "line 3: dashboard.proxy.user_header: Authorization carries credentials"},
		{"dashboard:\n  proxy:\n    user_header: X-User\n    trusted_proxies: [10.0.0.1]\n    roles: {a: root}\n", "line 5: dashboard.proxy.roles.a"},
	}
	for _, b := range bad {
		_, err := config.Parse([]byte(b.yaml), "warden.yaml")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: %v, want %q", b.yaml, err, b.want)
		}
	}
}
