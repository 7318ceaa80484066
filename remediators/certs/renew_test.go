package certs

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"

	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const acct = "111111111111"

// makeCert makes a self-signed certificate and its key, PEM.
func makeCert(t *testing.T, domains []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: domains[0]}, DNSNames: domains,
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func config(p *pebble) *Config {
	return &Config{Directory: p.Directory, Email: "security@example.com", CABundle: p.CABundle,
		Challenge: Challenge{HTTP01: &HTTP01{Listen: fmt.Sprintf("127.0.0.1:%d", p.HTTPPort)}}}
}

func newRenew(t *testing.T, cfg *Config, st *store.Store, s *awsapi.Sessions) *Renew {
	t.Helper()
	k := make([]byte, 32)
	_, _ = rand.Read(k)
	t.Setenv(ArchiveKeyEnv, base64.StdEncoding.EncodeToString(k))
	r, err := New(cfg, st, s, Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

func actionFor(id string, rem remediators.Remediator, res snapshot.Resource, tg remediators.Target) remediators.Action {
	return remediators.Action{ID: id, Remediator: rem.Spec().Action, Target: res.UID, ResourceType: res.Type, Account: res.Account,
		Region: res.Region, Part: tg.Part, Before: tg.Before, Rollback: rem.Spec().Rollback}
}

func oneTarget(t *testing.T, r *Renew, res snapshot.Resource) remediators.Target {
	t.Helper()
	ts, err := r.Targets(res, nil)
	if err != nil {
		t.Fatalf("Targets: %v", err)
	}
	if len(ts) != 1 {
		t.Fatalf("Targets = %d parts, want 1: %+v", len(ts), ts)
	}
	return ts[0]
}

// simEnv is the AWS simulator with one account, the sessions the fix uses and the
// collector that re-reads, as the remediate machine would.
type simEnv struct {
	sessions *awsapi.Sessions
	acm      *acm.Client
	reader   *awscollector.Collector
}

func startSim(t *testing.T) *simEnv {
	t.Helper()
	_, url := simtest.Start(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: acct, Regions: []string{"us-east-1"}}}}}, cloudsim.Options{})
	base := simtest.AWSConfig(url)
	s, err := awsapi.NewSessions(context.Background(), awsapi.Options{Endpoint: url, AWS: &base,
		RateLimits: map[string]float64{"acm": 0, "sts": 0}, MaxAttempts: 3, BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rd := awscollector.New(awscollector.Config{Endpoint: url, AWS: &base, Regions: []string{"us-east-1"},
		RateLimits:  map[string]float64{"iam": 0, "sts": 0, "ec2": 0, "acm": 0, "organizations": 0},
		BaseBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	return &simEnv{sessions: s, acm: acm.NewFromConfig(base), reader: rd}
}

// read re-reads a resource through the collector, through a JSON round trip as a
// snapshot carries it.
func (e *simEnv) read(t *testing.T, uid string) snapshot.Resource {
	t.Helper()
	res, err := e.reader.Read(context.Background(), uid)
	if err != nil {
		t.Fatalf("read %s: %v", uid, err)
	}
	return roundTrip(t, res)
}

func roundTrip(t *testing.T, res snapshot.Resource) snapshot.Resource {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var back snapshot.Resource
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

// acmLeaf is the certificate ACM holds under arn, through the SDK.
func (e *simEnv) acmLeaf(t *testing.T, arn string) *x509.Certificate {
	t.Helper()
	ctx := context.Background()
	d, err := e.acm.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("DescribeCertificate: %v", err)
	}
	if got := aws.ToString(d.Certificate.CertificateArn); got != arn {
		t.Fatalf("DescribeCertificate ARN = %s, want %s", got, arn)
	}
	g, err := e.acm.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(arn)})
	if err != nil {
		t.Fatalf("GetCertificate: %v", err)
	}
	leaf, err := parseLeaf(aws.ToString(g.Certificate))
	if err != nil {
		t.Fatal(err)
	}
	if !d.Certificate.NotAfter.Equal(leaf.NotAfter) {
		t.Errorf("DescribeCertificate NotAfter %s, GetCertificate's certificate %s", d.Certificate.NotAfter, leaf.NotAfter)
	}
	return leaf
}

// TestRenew_acmReimportsUnderTheSameARNAndRollsBack: a certificate close to expiry in
// ACM is renewed from pebble and re-imported under its ARN; a second renewal (warden now
// holds the key of the first) is rolled back to the first; the first cannot be rolled
// back, because warden never held the original key. The archive holds no plaintext key.
func TestRenew_acmReimportsUnderTheSameARNAndRollsBack(t *testing.T) {
	p := startPebble(t)
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := startSim(t)
			now := time.Now()
			certPEM, keyPEM := makeCert(t, []string{"shop.example.com", "www.shop.example.com"}, now.Add(-85*24*time.Hour), now.Add(5*24*time.Hour))
			imp, err := e.acm.ImportCertificate(ctx, &acm.ImportCertificateInput{Certificate: certPEM, PrivateKey: keyPEM})
			if err != nil {
				t.Fatal(err)
			}
			arn := aws.ToString(imp.CertificateArn)
			orig := e.acmLeaf(t, arn)
			path := dsn(t)
			st := storetest.Open(t, path)
			r := newRenew(t, config(p), st, e.sessions)

			res := e.read(t, arn)
			tg := oneTarget(t, r, res)
			if tg.Part != Part(serialOf(orig)) {
				t.Fatalf("part = %s, want %s", tg.Part, Part(serialOf(orig)))
			}
			if tg.Rollback == nil || tg.Rollback.Possible {
				t.Errorf("plan of a certificate someone else imported: rollback %+v, want not possible (ACM keeps its key)", tg.Rollback)
			}
			a1 := actionFor("act-acm-1", r, res, tg)
			if err := r.Apply(ctx, a1); err != nil {
				t.Fatalf("Apply: %v", err)
			}
			first := e.acmLeaf(t, arn)
			if serialOf(first) == serialOf(orig) || !first.NotAfter.After(orig.NotAfter.Add(60*24*time.Hour)) {
				t.Fatalf("ACM holds serial %s until %s; want a renewal of %s (until %s)", serialOf(first), first.NotAfter, serialOf(orig), orig.NotAfter)
			}
			if !strings.Contains(first.Issuer.String(), "Pebble") || !covers(first, []string{"shop.example.com", "www.shop.example.com"}) {
				t.Errorf("renewed certificate: issuer %s, names %v", first.Issuer, first.DNSNames)
			}
			if err := r.Verify(ctx, a1); err != nil {
				t.Errorf("Verify: %v", err)
			}
			// What the re-read shows: the planned part is gone, a new one is in its place.
			res1 := e.read(t, arn)
			tg1 := oneTarget(t, r, res1)
			if tg1.Part != Part(serialOf(first)) {
				t.Errorf("re-read part = %s, want %s", tg1.Part, Part(serialOf(first)))
			}
			if tg1.Rollback == nil || !tg1.Rollback.Possible {
				t.Errorf("plan of the certificate warden delivered: rollback %+v, want possible (its key is archived)", tg1.Rollback)
			}
			if err := r.Apply(ctx, a1); !errors.Is(err, remediators.ErrConverged) {
				t.Fatalf("Apply again = %v, want ErrConverged", err)
			}
			if got := e.acmLeaf(t, arn); serialOf(got) != serialOf(first) {
				t.Fatalf("Apply again issued %s", serialOf(got))
			}

			a2 := actionFor("act-acm-2", r, res1, tg1)
			if err := r.Apply(ctx, a2); err != nil {
				t.Fatalf("second Apply: %v", err)
			}
			second := e.acmLeaf(t, arn)
			if serialOf(second) == serialOf(first) {
				t.Fatal("the second renewal changed nothing")
			}
			if err := r.Rollback(ctx, a2); err != nil {
				t.Fatalf("Rollback: %v", err)
			}
			if got := e.acmLeaf(t, arn); !bytes.Equal(got.Raw, first.Raw) {
				t.Fatalf("after Rollback ACM holds %s, want the previous %s", serialOf(got), serialOf(first))
			}
			back := oneTarget(t, r, e.read(t, arn))
			if back.Part != tg1.Part || !bytes.Equal(back.Before, tg1.Before) {
				t.Errorf("after Rollback the re-read is %s %s, want the before-state %s %s", back.Part, back.Before, tg1.Part, tg1.Before)
			}
			if err := r.Rollback(ctx, a2); err != nil {
				t.Errorf("Rollback again: %v", err)
			}
			err = r.Rollback(ctx, a1)
			if !errors.Is(err, remediators.ErrNoRollback) || !strings.Contains(err.Error(), serialOf(orig)) {
				t.Errorf("Rollback of the first renewal = %v, want ErrNoRollback naming serial %s", err, serialOf(orig))
			}
			assertNoPlaintextKeys(t, path, keyPEM)
		})
	}
}

// assertNoPlaintextKeys looks through the database as stored (SQLite's files, or
// PostgreSQL's rows) for PEM and for the body of a known key.
func assertNoPlaintextKeys(t *testing.T, dsn string, keys ...[]byte) {
	t.Helper()
	var blobs [][]byte
	if strings.HasPrefix(dsn, "postgres") {
		db, _ := storetest.RawDB(t, dsn)
		rows, err := db.Query(`SELECT ciphertext FROM cert_archive`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			blobs = append(blobs, b)
		}
		if len(blobs) == 0 {
			t.Fatal("the archive is empty")
		}
	} else {
		files, _ := filepath.Glob(dsn + "*")
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			blobs = append(blobs, b)
		}
	}
	for _, b := range blobs {
		for _, bad := range [][]byte{[]byte("PRIVATE KEY"), []byte("-----BEGIN")} {
			if bytes.Contains(b, bad) {
				t.Errorf("the database holds %q in the clear", bad)
			}
		}
		for _, k := range keys {
			blk, _ := pem.Decode(k)
			if blk != nil && (bytes.Contains(b, blk.Bytes) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(blk.Bytes)[:40]))) {
				t.Error("the database holds a private key's bytes in the clear")
			}
		}
	}
}

// pemServer is a TLS endpoint serving the certificate files, reloaded when its reload
// command (touch STAMP) changes the stamp file.
type pemServer struct {
	files Files
	stamp string
	addr  string

	mu    sync.Mutex
	mod   time.Time
	cert  *tls.Certificate
	loads int
}

func servePEM(t *testing.T, files Files, stamp string) *pemServer {
	t.Helper()
	s := &pemServer{files: files, stamp: stamp}
	if err := s.load(); err != nil {
		t.Fatal(err)
	}
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{GetCertificate: s.get})
	if err != nil {
		t.Fatal(err)
	}
	s.addr = l.Addr().String()
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				_ = c.(*tls.Conn).Handshake()
				c.Close()
			}()
		}
	}()
	return s
}

func (s *pemServer) load() error {
	c, err := tls.LoadX509KeyPair(s.files.Cert, s.files.Key)
	if err != nil {
		return err
	}
	s.cert = &c
	s.loads++
	return nil
}

func (s *pemServer) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, err := os.Stat(s.stamp); err == nil && !st.ModTime().Equal(s.mod) {
		s.mod = st.ModTime()
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	return s.cert, nil
}

// probe reads the endpoint as warden's TLS collector does.
func probe(t *testing.T, addr string) snapshot.Resource {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(port)
	c := &tlsprobe.Collector{Targets: []tlsprobe.Target{{Host: host, Port: n, SNI: "shop.example.com"}}}
	var sink collectors.MemorySink
	if err := c.Collect(context.Background(), &sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.Resources) != 1 {
		t.Fatalf("probe of %s: %d resources, scopes %+v", addr, len(sink.Resources), sink.Scopes)
	}
	return roundTrip(t, sink.Resources[0])
}

func probedSerial(t *testing.T, addr string) string {
	t.Helper()
	res := probe(t, addr)
	m, _ := res.Attributes["certificate"].(map[string]any)
	s, _ := m["serial"].(string)
	return s
}

// filesWorld is an endpoint serving PEM files close to expiry, configured as a target.
type filesWorld struct {
	dir      string
	files    Files
	stamp    string
	srv      *pemServer
	origCert []byte
	origKey  []byte
	cfg      *Config
}

func newFilesWorld(t *testing.T, p *pebble, reload func(w *filesWorld) []string) *filesWorld {
	t.Helper()
	w := &filesWorld{dir: t.TempDir()}
	w.files = Files{Cert: filepath.Join(w.dir, "shop.crt"), Key: filepath.Join(w.dir, "shop.key"), Chain: filepath.Join(w.dir, "chain.pem")}
	w.stamp = filepath.Join(w.dir, "reloaded")
	now := time.Now()
	w.origCert, w.origKey = makeCert(t, []string{"shop.example.com"}, now.Add(-80*24*time.Hour), now.Add(10*24*time.Hour))
	if err := os.WriteFile(w.files.Cert, w.origCert, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(w.files.Key, w.origKey, 0o640); err != nil {
		t.Fatal(err)
	}
	w.srv = servePEM(t, w.files, w.stamp)
	w.cfg = config(p)
	w.cfg.Targets = map[string]Target{w.srv.addr: {Files: w.files, Reload: reload(w)}}
	return w
}

func touchReload(t *testing.T) func(w *filesWorld) []string {
	touch, err := exec.LookPath("touch")
	if err != nil {
		t.Skip("no touch program for the reload command")
	}
	return func(w *filesWorld) []string { return []string{touch, w.stamp} }
}

// TestRenew_filesAtomicVerifiedByProbe: PEM files are renewed from pebble, written with
// mode 0600 and no temporary file left, the endpoint reloads and a TLS probe sees the new
// certificate; Rollback puts the old files back byte for byte (the chain file, absent
// before, is removed) and the probe sees the old certificate again.
func TestRenew_filesAtomicVerifiedByProbe(t *testing.T) {
	p := startPebble(t)
	ctx := context.Background()
	w := newFilesWorld(t, p, touchReload(t))
	path := filepath.Join(t.TempDir(), "warden.db")
	r := newRenew(t, w.cfg, storetest.Open(t, path), nil)

	res := probe(t, w.srv.addr)
	orig := probedSerial(t, w.srv.addr)
	tg := oneTarget(t, r, res)
	a := actionFor("act-files", r, res, tg)
	if err := r.Apply(ctx, a); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	for _, f := range []string{w.files.Cert, w.files.Key, w.files.Chain} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(w.dir, ".*warden-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := r.Verify(ctx, a); err != nil {
		t.Errorf("Verify: %v", err)
	}
	renewed := probedSerial(t, w.srv.addr)
	iss, _ := r.arch.get(ctx, a.ID, kindIssued)
	if renewed == orig || iss == nil || renewed != iss.Serial {
		t.Fatalf("the endpoint serves %s; want the renewal %v of %s", renewed, iss, orig)
	}
	after := oneTarget(t, r, probe(t, w.srv.addr))
	if after.Part == tg.Part {
		t.Errorf("the re-read still shows part %s", tg.Part)
	}
	if err := r.Apply(ctx, a); !errors.Is(err, remediators.ErrConverged) {
		t.Errorf("Apply again = %v, want ErrConverged", err)
	}

	if err := r.Rollback(ctx, a); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	if got, _ := os.ReadFile(w.files.Cert); !bytes.Equal(got, w.origCert) {
		t.Error("Rollback did not restore the certificate file")
	}
	if got, _ := os.ReadFile(w.files.Key); !bytes.Equal(got, w.origKey) {
		t.Error("Rollback did not restore the key file")
	}
	if st, err := os.Stat(w.files.Key); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("restored key file: %v, mode %v; want its old mode 0640", err, st.Mode().Perm())
	}
	if _, err := os.Stat(w.files.Chain); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the chain file, absent before, is still there: %v", err)
	}
	if got := probedSerial(t, w.srv.addr); got != orig {
		t.Errorf("after Rollback the endpoint serves %s, want %s", got, orig)
	}
	back := oneTarget(t, r, probe(t, w.srv.addr))
	if back.Part != tg.Part || !bytes.Equal(back.Before, tg.Before) {
		t.Errorf("after Rollback the re-read is %s %s, want %s %s", back.Part, back.Before, tg.Part, tg.Before)
	}
	assertNoPlaintextKeys(t, path, w.origKey)
}

// TestRenew_crashBetweenArchiveAndDelivery: Apply stops after archiving (a fault where a
// crash would be); nothing was delivered; the next Apply delivers the certificate the
// first one obtained, without a second order.
func TestRenew_crashBetweenArchiveAndDelivery(t *testing.T) {
	p := startPebble(t)
	ctx := context.Background()
	w := newFilesWorld(t, p, touchReload(t))
	r := newRenew(t, w.cfg, storetest.Open(t, filepath.Join(t.TempDir(), "warden.db")), nil)
	res := probe(t, w.srv.addr)
	a := actionFor("act-crash", r, res, oneTarget(t, r, res))

	crash := errors.New("crash")
	r.beforeDeliver = func(context.Context, remediators.Action) error { return crash }
	if err := r.Apply(ctx, a); !errors.Is(err, crash) {
		t.Fatalf("Apply = %v, want the crash", err)
	}
	if got, _ := os.ReadFile(w.files.Cert); !bytes.Equal(got, w.origCert) {
		t.Fatal("the certificate file changed before the delivery")
	}
	prev, _ := r.arch.get(ctx, a.ID, kindPrevious)
	iss, _ := r.arch.get(ctx, a.ID, kindIssued)
	if prev == nil || iss == nil || !bytes.Equal(prev.M.Files["key"].Data, w.origKey) {
		t.Fatalf("archive after the crash: previous %v, issued %v; want both, the previous with its key", prev != nil, iss != nil)
	}

	r.beforeDeliver = nil
	if err := r.Apply(ctx, a); err != nil {
		t.Fatalf("Apply after the crash: %v", err)
	}
	if got := probedSerial(t, w.srv.addr); got != iss.Serial {
		t.Errorf("the endpoint serves %s, want the certificate obtained before the crash %s", got, iss.Serial)
	}
	if again, _ := r.arch.get(ctx, a.ID, kindIssued); again == nil || again.Serial != iss.Serial {
		t.Error("the re-run ordered another certificate")
	}
}

// TestRenew_errorsNeverPrintTheKey: a reload command that prints the new key and fails
// gives an error without the key.
func TestRenew_errorsNeverPrintTheKey(t *testing.T) {
	p := startPebble(t)
	cat, err := exec.LookPath("cat")
	if err != nil {
		t.Skip("no cat program")
	}
	ctx := context.Background()
	w := newFilesWorld(t, p, func(w *filesWorld) []string { return []string{cat, w.files.Key, filepath.Join(w.dir, "missing")} })
	r := newRenew(t, w.cfg, storetest.Open(t, filepath.Join(t.TempDir(), "warden.db")), nil)
	res := probe(t, w.srv.addr)
	a := actionFor("act-leak", r, res, oneTarget(t, r, res))
	err = r.Apply(ctx, a)
	if err == nil || !strings.Contains(err.Error(), "reload") {
		t.Fatalf("Apply = %v, want the reload's failure", err)
	}
	key, _ := os.ReadFile(w.files.Key)
	msg := err.Error()
	if strings.Contains(msg, "PRIVATE KEY") || !strings.Contains(msg, "[private key redacted]") {
		t.Errorf("the error shows the key: %s", msg)
	}
	for _, line := range strings.Split(string(key), "\n") {
		if len(line) > 16 && !strings.HasPrefix(line, "-----") && strings.Contains(msg, line) {
			t.Errorf("the error holds a line of the key: %s", msg)
		}
	}
}

// TestRenew_targets: what a renewal replaces, and what it leaves alone. Planning needs
// the config (where each endpoint's files go) and no database; applying needs both.
func TestRenew_targets(t *testing.T) {
	r, err := New(&Config{Directory: "https://acme.example/dir", Challenge: Challenge{HTTP01: &HTTP01{Listen: ":80"}},
		Targets: map[string]Target{"shop.example.com:443": {Files: Files{Cert: "/etc/tls/c.pem", Key: "/etc/tls/k.pem"}}}},
		nil, nil, Options{})
	if err != nil {
		t.Fatalf("New for planning (no store): %v", err)
	}
	cert := map[string]any{"serial": "1a", "not_after": "2026-01-01T00:00:00Z", "dns_names": []any{"shop.example.com"}}
	tests := []struct {
		name string
		res  snapshot.Resource
		want string // the before-state, "" for no target, "n/a" for remediators.ErrNotApplicable
	}{
		{"imported ACM certificate", snapshot.Resource{UID: "arn:aws:acm:us-east-1:1:certificate/x", Type: "aws.acm.certificate",
			Attributes: map[string]any{"cert_type": "IMPORTED", "domain_name": "shop.example.com", "subject_alternative_names": []any{"shop.example.com", "www.example.com"}, "certificate": cert}},
			`{"acm":"arn:aws:acm:us-east-1:1:certificate/x","domains":["shop.example.com","www.example.com"],"not_after":"2026-01-01T00:00:00Z","serial":"1a"}`},
		{"ACM renews its own", snapshot.Resource{UID: "arn:aws:acm:us-east-1:1:certificate/y", Type: "aws.acm.certificate",
			Attributes: map[string]any{"cert_type": "AMAZON_ISSUED", "domain_name": "shop.example.com", "certificate": cert}}, "n/a"},
		{"configured endpoint", snapshot.Resource{UID: "tls://shop.example.com:443", Type: "tls.endpoint",
			Attributes: map[string]any{"host": "shop.example.com", "port": float64(443), "certificate": cert}},
			`{"domains":["shop.example.com"],"files":{"cert":"/etc/tls/c.pem","key":"/etc/tls/k.pem"},"not_after":"2026-01-01T00:00:00Z","serial":"1a"}`},
		{"endpoint not in certs.targets", snapshot.Resource{UID: "tls://other.example.com:443", Type: "tls.endpoint",
			Attributes: map[string]any{"host": "other.example.com", "port": 443, "certificate": cert}}, "n/a"},
		{"unreachable endpoint", snapshot.Resource{UID: "tls://shop.example.com:443", Type: "tls.endpoint",
			Attributes: map[string]any{"host": "shop.example.com", "port": 443, "reachable": false}}, ""},
		{"GCP certificate", snapshot.Resource{UID: "//compute.googleapis.com/projects/p/global/sslCertificates/c", Type: "gcp.compute.ssl_certificate",
			Attributes: map[string]any{"certificate": cert}}, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, err := r.Targets(tt.res, nil)
			if tt.want == "n/a" {
				if !errors.Is(err, remediators.ErrNotApplicable) || len(ts) != 0 {
					t.Fatalf("Targets = %v, %v; want ErrNotApplicable with its reason", ts, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(ts) != 0 {
					t.Fatalf("Targets = %s, want none", ts[0].Before)
				}
				return
			}
			if len(ts) != 1 || ts[0].Part != "certificate/1a" || string(ts[0].Before) != tt.want {
				t.Fatalf("Targets = %+v, want certificate/1a %s", ts, tt.want)
			}
			// ACM keeps no key to give back: without the archive, the plan says undo is
			// not possible, and why; files are restored from the archive.
			if acm := tt.res.Type == "aws.acm.certificate"; acm != (ts[0].Rollback != nil && !ts[0].Rollback.Possible) {
				t.Errorf("rollback of %s: %+v", tt.name, ts[0].Rollback)
			}
		})
	}
	a := remediators.Action{ID: "x", Before: []byte(`{"serial":"1a","domains":["a.example"],"acm":"arn"}`)}
	if err := r.Apply(context.Background(), a); err == nil || !strings.Contains(err.Error(), "no database") {
		t.Errorf("Apply without a store = %v", err)
	}
	unconfigured, _ := New(nil, nil, nil, Options{})
	if err := unconfigured.Apply(context.Background(), a); err == nil || !strings.Contains(err.Error(), "not configured") {
		t.Errorf("Apply without a config = %v", err)
	}
}

// TestRenew_acmRollbackSaysWhatIsMissing: a plan that cannot undo an ACM re-import says
// why: without a certs: section, that section (and what goes in it), whatever the
// database; with one but without the database, --db.
func TestRenew_acmRollbackSaysWhatIsMissing(t *testing.T) {
	cfg := &Config{Directory: "https://acme.example/dir", Challenge: Challenge{HTTP01: &HTTP01{Listen: ":80"}}}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	res := snapshot.Resource{UID: "arn:aws:acm:us-east-1:1:certificate/x", Type: "aws.acm.certificate",
		Attributes: map[string]any{"cert_type": "IMPORTED", "domain_name": "shop.example.com",
			"certificate": map[string]any{"serial": "1a", "not_after": "2026-01-01T00:00:00Z"}}}
	for _, tc := range []struct {
		name        string
		cfg         *Config
		st          *store.Store
		want, want2 string
		not         string
	}{
		{"no certs: section, no database", nil, nil, "no certs: section", "archive_key_file", "--db"},
		{"no certs: section, a database", nil, st, "no certs: section", "archive_key_file", "--db"},
		{"certs: section, no database", cfg, nil, "without warden's database", "(no --db)", "certs: section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRenew(t, tc.cfg, tc.st, nil)
			rb := oneTarget(t, r, res).Rollback
			if rb == nil || rb.Possible {
				t.Fatalf("rollback = %+v, want impossible with its reason", rb)
			}
			if !strings.Contains(rb.Reason, tc.want) || !strings.Contains(rb.Reason, tc.want2) || strings.Contains(rb.Reason, tc.not) {
				t.Errorf("reason %q: want %q and %q, not %q", rb.Reason, tc.want, tc.want2, tc.not)
			}
		})
	}
}

func TestRedactKeys(t *testing.T) {
	_, key := makeCert(t, []string{"a.example"}, time.Now(), time.Now().Add(time.Hour))
	tests := []struct{ in, want string }{
		{"no key here", "no key here"},
		{"out: " + string(key) + " done", "out: [private key redacted]\n done"},
		{"cut: " + string(key[:60]), "cut: [private key redacted]"},
		{"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----"},
	}
	for _, tt := range tests {
		if got := redactKeys(tt.in); got != tt.want {
			t.Errorf("redactKeys(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
