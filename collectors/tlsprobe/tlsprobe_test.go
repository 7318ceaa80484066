package tlsprobe_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

type pki struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	pool   *x509.CertPool
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "warden test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &pki{caCert: ca, caKey: key, pool: pool}
}

// leaf issues a certificate for names and ips, signed by the CA or by itself.
func (p *pki) leaf(t *testing.T, selfSigned bool, ips []net.IP, names ...string) tls.Certificate {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "leaf"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(10 * 24 * time.Hour), DNSNames: names, IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	parent, signer := p.caCert, p.caKey
	if selfSigned {
		parent, signer = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func serve(t *testing.T, cert tls.Certificate, minVersion uint16) tlsprobe.Target {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.NotFoundHandler())
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: minVersion}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	host, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tg, err := tlsprobe.ParseTarget(net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestCollect(t *testing.T) {
	p := newPKI(t)
	loopback := []net.IP{net.ParseIP("127.0.0.1")}
	good := serve(t, p.leaf(t, false, loopback), tls.VersionTLS12)
	legacy := serve(t, p.leaf(t, false, loopback), tls.VersionTLS10)
	selfSigned := serve(t, p.leaf(t, true, nil, "other.example"), tls.VersionTLS12)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed, _ := tlsprobe.ParseTarget(l.Addr().String())
	l.Close()

	c := &tlsprobe.Collector{Targets: []tlsprobe.Target{good, legacy, selfSigned, closed}, Roots: p.pool, Timeout: 5 * time.Second}
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	byUID := map[string]map[string]any{}
	for _, r := range sink.Resources {
		if err := snapshot.Validate(r); err != nil {
			t.Errorf("collected resource is not valid: %v", err)
		}
		byUID[r.UID] = r.Attributes
	}
	uid := func(tg tlsprobe.Target) string { return "tls://" + net.JoinHostPort(tg.Host, itoa(tg.Port)) }
	attrs := func(tg tlsprobe.Target) map[string]any {
		return byUID["tls://"+net.JoinHostPort(tg.Host, itoa(tg.Port))]
	}

	g := attrs(good)
	if g["reachable"] != true || g["trusted"] != true || g["hostname_match"] != true || g["min_protocol"] != "TLS1.2" {
		t.Errorf("good endpoint = %v", g)
	}
	if !slices.Equal(g["protocols"].([]any), []any{"TLS1.2", "TLS1.3"}) {
		t.Errorf("good protocols = %v", g["protocols"])
	}
	cert := g["certificate"].(map[string]any)
	if cert["key_algorithm"] != "EC" || cert["key_size"] != 256 || cert["signature_algorithm"] != "ECDSA-SHA256" || cert["self_signed"] != false {
		t.Errorf("certificate = %v", cert)
	}
	if lg := attrs(legacy); lg["min_protocol"] != "TLS1.0" {
		t.Errorf("legacy endpoint accepts %v, want TLS1.0 first", lg["protocols"])
	}
	ss := attrs(selfSigned)
	if ss["trusted"] != false || ss["hostname_match"] != false || ss["certificate"].(map[string]any)["self_signed"] != true {
		t.Errorf("self-signed endpoint = %v", ss)
	}
	// An endpoint that could not be read is a failed scope naming the error, and no
	// resource: its state is unknown, not "unreachable and therefore clean".
	if cl, ok := byUID[uid(closed)]; ok {
		t.Errorf("closed endpoint listed as a resource: %v", cl)
	}
	failed := 0
	for _, s := range sink.Scopes {
		if s.Status == snapshot.ScopeFailed {
			failed++
			if s.Error == "" || s.Resources != 0 || s.ID != "tls/"+strings.TrimPrefix(uid(closed), "tls://") {
				t.Errorf("failed scope = %+v", s)
			}
		}
	}
	if len(sink.Scopes) != 4 || failed != 1 {
		t.Errorf("scopes = %+v, want 4 with 1 failed", sink.Scopes)
	}

	// What the probe saw is what the certificate policies judge.
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), sink.Resources)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, f := range res.Findings {
		got[f.Resource] = append(got[f.Resource], f.Policy)
	}
	want := map[string][]string{
		uid(good):       {"WARDEN-CERT-002"}, // expires in 10 days
		uid(legacy):     {"WARDEN-CERT-002", "WARDEN-CERT-007"},
		uid(selfSigned): {"WARDEN-CERT-002", "WARDEN-CERT-005", "WARDEN-CERT-006"},
	}
	for u, ids := range want {
		slices.Sort(got[u])
		if !slices.Equal(got[u], ids) {
			t.Errorf("%s: policies %v, want %v", u, got[u], ids)
		}
	}
	if len(got[uid(closed)]) != 0 {
		t.Errorf("unreachable endpoint has findings %v", got[uid(closed)])
	}
}

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want tlsprobe.Target
		err  bool
	}{
		{"shop.example:8443", tlsprobe.Target{Host: "shop.example", Port: 8443}, false},
		{"shop.example", tlsprobe.Target{Host: "shop.example", Port: 443}, false},
		{"10.0.0.1:443@shop.example", tlsprobe.Target{Host: "10.0.0.1", Port: 443, SNI: "shop.example"}, false},
		{"[::1]:443", tlsprobe.Target{Host: "::1", Port: 443}, false},
		{"shop.example:http", tlsprobe.Target{}, true},
		{"shop.example:70000", tlsprobe.Target{}, true},
	}
	for _, tt := range tests {
		got, err := tlsprobe.ParseTarget(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseTarget(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

func itoa(n int) string { return big.NewInt(int64(n)).String() }

func FuzzParseTarget(f *testing.F) {
	f.Add("shop.example:443@sni")
	f.Add("[::1]:8443")
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := tlsprobe.ParseTarget(s)
		if err == nil && (tg.Host == "" || tg.Port < 1 || tg.Port > 65535) {
			t.Fatalf("ParseTarget(%q) = %+v without error", s, tg)
		}
	})
}

// TestCollect_hostnameMatchesSNI: the certificate is checked against the name sent as
// SNI, not the address connected to: 127.0.0.1:PORT@api.example.com serving a
// certificate for api.example.com matches (no CERT-006); without the SNI, or with another
// one, it does not.
func TestCollect_hostnameMatchesSNI(t *testing.T) {
	p := newPKI(t)
	addr := serve(t, p.leaf(t, false, nil, "api.example.com"), tls.VersionTLS12)
	tests := []struct {
		name  string
		sni   string
		match bool
	}{
		{"the SNI the certificate names", "api.example.com", true},
		{"no SNI: the address", "", false},
		{"another SNI", "www.example.com", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := addr
			tg.SNI = tc.sni
			c := &tlsprobe.Collector{Targets: []tlsprobe.Target{tg}, Roots: p.pool, Timeout: 5 * time.Second}
			var sink collectors.MemorySink
			if err := c.Collect(context.Background(), &sink); err != nil {
				t.Fatal(err)
			}
			if len(sink.Resources) != 1 {
				t.Fatalf("resources = %v, want the endpoint", sink.Resources)
			}
			a := sink.Resources[0].Attributes
			if a["hostname_match"] != tc.match || a["trusted"] != true {
				t.Errorf("hostname_match = %v, trusted = %v; want %v, true", a["hostname_match"], a["trusted"], tc.match)
			}
			e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.Evaluate(context.Background(), snapshot.Header{}, time.Now(), sink.Resources)
			if err != nil {
				t.Fatal(err)
			}
			mismatch := slices.ContainsFunc(res.Findings, func(f findings.Finding) bool { return f.Policy == "WARDEN-CERT-006" })
			if mismatch == tc.match {
				t.Errorf("CERT-006 raised: %v, want %v", mismatch, !tc.match)
			}
		})
	}
}

// Read probes one endpoint again by uid, as Collect does; a closed one is an error, not
// gone, and other uids are not its own.
func TestRead(t *testing.T) {
	p := newPKI(t)
	good := serve(t, p.leaf(t, false, []net.IP{net.ParseIP("127.0.0.1")}), tls.VersionTLS12)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed, _ := tlsprobe.ParseTarget(l.Addr().String())
	l.Close()
	c := &tlsprobe.Collector{Targets: []tlsprobe.Target{good}, Roots: p.pool, Timeout: 5 * time.Second}
	ctx := context.Background()
	var sink collectors.MemorySink
	if err := c.Collect(ctx, &sink); err != nil {
		t.Fatal(err)
	}
	uid := "tls://" + net.JoinHostPort(good.Host, itoa(good.Port))
	res, err := c.Read(ctx, uid)
	if err != nil {
		t.Fatal(err)
	}
	if res.UID != uid || res.Attributes["trusted"] != true || res.Attributes["certificate"].(map[string]any)["serial"] != sink.Resources[0].Attributes["certificate"].(map[string]any)["serial"] {
		t.Errorf("Read = %+v, want what Collect saw", res.Attributes)
	}
	if _, err := c.Read(ctx, "tls://"+net.JoinHostPort(closed.Host, itoa(closed.Port))); err == nil || errors.Is(err, collectors.ErrNotFound) {
		t.Errorf("Read of a closed endpoint: %v, want an error that is not ErrNotFound", err)
	}
	if _, err := c.Read(ctx, "arn:aws:iam::111111111111:user/alice"); !errors.Is(err, collectors.ErrUnsupported) {
		t.Errorf("Read of an AWS uid: %v, want ErrUnsupported", err)
	}
}
