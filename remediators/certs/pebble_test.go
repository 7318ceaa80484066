package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// pebble is a real ACME server (letsencrypt/pebble, the Go tool of go.mod) started for
// one test. Its validation authority resolves every name through a DNS server of the
// test that answers 127.0.0.1, and fetches http-01 answers from HTTPPort there: real
// validation of warden's http-01 listener, no PEBBLE_VA_ALWAYS_VALID.
type pebble struct {
	Directory string // https://127.0.0.1:PORT/dir
	CABundle  string // the root pebble's listener is signed by (its test minica)
	HTTPPort  int    // where the http-01 answers must be served
}

var (
	pebbleOnce sync.Once
	pebbleDir  string
	pebbleBin  string
	pebbleErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if pebbleDir != "" {
		_ = os.RemoveAll(pebbleDir)
	}
	os.Exit(code)
}

// pebbleBinary builds pebble once per test binary, into a directory removed at exit.
func pebbleBinary() (string, error) {
	pebbleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "warden-pebble-")
		if err != nil {
			pebbleErr = err
			return
		}
		pebbleDir, pebbleBin = dir, filepath.Join(dir, "pebble")
		cmd := exec.Command("go", "build", "-o", pebbleBin, "github.com/letsencrypt/pebble/v2/cmd/pebble")
		if out, err := cmd.CombinedOutput(); err != nil {
			pebbleErr = fmt.Errorf("go build pebble: %v: %s", err, out)
		}
	})
	return pebbleBin, pebbleErr
}

func pebbleModuleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/letsencrypt/pebble/v2").Output()
	if err != nil {
		return "", fmt.Errorf("go list pebble: %v", err)
	}
	return strings.TrimSpace(string(out)), nil
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDNS serves A 127.0.0.1 for every name, and nothing else (no AAAA, no CAA), over
// UDP and TCP on one port (pebble's resolver asks over TCP).
func startDNS(t *testing.T) string {
	t.Helper()
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		for _, q := range r.Question {
			if q.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1},
					A: net.IPv4(127, 0, 0, 1)})
			}
		}
		_ = w.WriteMsg(m)
	})
	for range 20 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			continue
		}
		udp, tcp := &dns.Server{PacketConn: pc, Handler: h}, &dns.Server{Listener: l, Handler: h}
		go func() { _ = udp.ActivateAndServe() }()
		go func() { _ = tcp.ActivateAndServe() }()
		t.Cleanup(func() { _ = udp.Shutdown(); _ = tcp.Shutdown() })
		return pc.LocalAddr().String()
	}
	t.Fatal("no port free for both UDP and TCP")
	return ""
}

// startPebble runs pebble for one test; it skips the test, saying why, only when pebble
// cannot be built or started.
func startPebble(t *testing.T) *pebble {
	t.Helper()
	bin, err := pebbleBinary()
	if err != nil {
		t.Skipf("pebble cannot be built, so there is no ACME server to test against: %v", err)
	}
	mod, err := pebbleModuleDir()
	if err != nil {
		t.Skipf("pebble's test certificates cannot be found: %v", err)
	}
	dnsAddr := startDNS(t)
	listen, httpPort, tlsPort := freePort(t), freePort(t), freePort(t)
	cfg := map[string]any{"pebble": map[string]any{
		"listenAddress":           fmt.Sprintf("127.0.0.1:%d", listen),
		"managementListenAddress": "",
		"certificate":             filepath.Join(mod, "test/certs/localhost/cert.pem"),
		"privateKey":              filepath.Join(mod, "test/certs/localhost/key.pem"),
		"httpPort":                httpPort,
		"tlsPort":                 tlsPort,
		"keyAlgorithm":            "ecdsa",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
		"profiles":                map[string]any{"default": map[string]any{"description": "90 days", "validityPeriod": 7776000}},
	}}
	dir := t.TempDir()
	b, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "pebble.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", cfgPath, "-dnsserver", dnsAddr)
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0", "PEBBLE_AUTHZREUSE=0")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Skipf("pebble does not start: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		logf.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logf.Name()); err == nil {
				t.Logf("pebble log:\n%s", b)
			}
		}
	})
	p := &pebble{Directory: fmt.Sprintf("https://127.0.0.1:%d/dir", listen),
		CABundle: filepath.Join(mod, "test/certs/pebble.minica.pem"), HTTPPort: httpPort}
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(p.CABundle)
	if err != nil || !pool.AppendCertsFromPEM(ca) {
		t.Skipf("pebble's test root %s cannot be read: %v", p.CABundle, err)
	}
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		resp, err := hc.Get(p.Directory)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-done:
			b, _ := os.ReadFile(logf.Name())
			t.Skipf("pebble exited at start: %s", b)
		case <-ctx.Done():
			t.Skipf("pebble did not answer on %s: %v", p.Directory, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
