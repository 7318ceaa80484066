package tlsprobe_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/snapshot"
)

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestScopes_equalCollect: Scopes names the scopes Collect reports, one per endpoint, and
// CollectScope of each reports that scope and its resource as Collect did; an endpoint
// that cannot be reached is its scope failed, and only that one.
func TestScopes_equalCollect(t *testing.T) {
	p := newPKI(t)
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	good := serve(t, p.leaf(t, false, loopback), tls.VersionTLS12)
	legacy := serve(t, p.leaf(t, false, loopback), tls.VersionTLS10)
	selfSigned := serve(t, p.leaf(t, true, nil, "other.example"), tls.VersionTLS12)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed, _ := tlsprobe.ParseTarget(l.Addr().String())
	l.Close()
	now := time.Now()
	c := &tlsprobe.Collector{Targets: []tlsprobe.Target{good, legacy, selfSigned, closed}, Roots: p.pool, Timeout: 5 * time.Second,
		Now: func() time.Time { return now }}
	ctx := context.Background()

	var full collectors.MemorySink
	if err := c.Collect(ctx, &full); err != nil {
		t.Fatal(err)
	}
	want := map[string]snapshot.Scope{}
	for _, s := range full.Scopes {
		want[s.ID] = s
	}
	wantRes := map[string]string{}
	for _, r := range full.Resources {
		wantRes[r.Scope] = asJSON(t, r)
	}

	scopes, err := c.Scopes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range scopes {
		got = append(got, s.ID)
		w := want[s.ID]
		if s.Provider != w.Provider || s.Account != w.Account || s.Service != w.Service || s.Region != w.Region || s.Status != "" {
			t.Errorf("Scopes named %+v, Collect %+v", s, w)
		}
	}
	wantIDs := []string{scopeOf(good), scopeOf(legacy), scopeOf(selfSigned), scopeOf(closed)}
	if !slices.Equal(got, wantIDs) || len(want) != len(wantIDs) {
		t.Fatalf("Scopes = %v, Collect %v, want %v", got, slices.Sorted(maps.Keys(want)), wantIDs)
	}

	for _, s := range scopes {
		t.Run(s.ID, func(t *testing.T) {
			var sink collectors.MemorySink
			if err := c.CollectScope(ctx, s.ID, &sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.Scopes) != 1 || asJSON(t, sink.Scopes[0]) != asJSON(t, want[s.ID]) {
				t.Fatalf("scopes = %+v, want Collect's %+v alone", sink.Scopes, want[s.ID])
			}
			if s.ID == scopeOf(closed) {
				if sink.Scopes[0].Status != snapshot.ScopeFailed || len(sink.Resources) != 0 {
					t.Errorf("the closed endpoint = %+v with %d resources, want failed and none", sink.Scopes[0], len(sink.Resources))
				}
				return
			}
			if sink.Scopes[0].Status != snapshot.ScopeOK {
				t.Errorf("scope = %+v, want ok: only the closed endpoint fails", sink.Scopes[0])
			}
			if len(sink.Resources) != 1 || asJSON(t, sink.Resources[0]) != wantRes[s.ID] {
				t.Errorf("resources = %+v, want Collect's %s", sink.Resources, wantRes[s.ID])
			}
		})
	}
}

func scopeOf(t tlsprobe.Target) string {
	return "tls/" + net.JoinHostPort(t.Host, strconv.Itoa(t.Port))
}

// TestCollectScope_unknown: an id that is not a target's endpoint is ErrUnknownScope, and
// nothing is probed or reported.
func TestCollectScope_unknown(t *testing.T) {
	c := &tlsprobe.Collector{Targets: []tlsprobe.Target{{Host: "shop.acme.example", Port: 443, SNI: "www.acme.example"}}, Timeout: time.Second}
	scopes, err := c.Scopes(context.Background())
	if err != nil || len(scopes) != 1 || scopes[0].ID != "tls/shop.acme.example:443" {
		t.Fatalf("Scopes = %+v, %v", scopes, err)
	}
	for _, id := range []string{"", "tls/", "tls/shop.acme.example", "tls/shop.acme.example:8443", "tls/www.acme.example:443",
		"tls://shop.acme.example:443", "aws/111111111111/iam", "shop.acme.example:443"} {
		var sink collectors.MemorySink
		if err := c.CollectScope(context.Background(), id, &sink); !errors.Is(err, collectors.ErrUnknownScope) {
			t.Errorf("CollectScope(%q) = %v, want ErrUnknownScope", id, err)
		}
		if len(sink.Scopes) != 0 || len(sink.Resources) != 0 {
			t.Errorf("CollectScope(%q) reported %+v and %+v", id, sink.Scopes, sink.Resources)
		}
	}
}
