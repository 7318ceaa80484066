// Package tlsprobe collects TLS endpoints: the certificate chain an endpoint serves, its
// expiry, key and signature, whether it is trusted and matches the host name, and the
// oldest protocol version the endpoint still accepts.
package tlsprobe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/snapshot"
)

// Target is one endpoint to probe.
type Target struct {
	Host string
	Port int
	// SNI is the server name to send; empty means Host.
	SNI string
}

// ParseTarget reads "host:port" (port 443 when omitted), with an optional "@sni" suffix.
func ParseTarget(s string) (Target, error) {
	var t Target
	if at := strings.LastIndex(s, "@"); at >= 0 {
		t.SNI, s = s[at+1:], s[:at]
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = s, "443"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return Target{}, fmt.Errorf("TLS target %q: port must be a number from 1 to 65535", s)
	}
	if host == "" {
		return Target{}, fmt.Errorf("TLS target %q: host is empty", s)
	}
	t.Host, t.Port = host, p
	return t, nil
}

func (t Target) addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

func (t Target) sni() string {
	if t.SNI != "" {
		return t.SNI
	}
	return t.Host
}

// Collector probes TLS endpoints.
type Collector struct {
	Targets []Target
	// Timeout bounds each connection attempt; 0 means 10 seconds.
	Timeout time.Duration
	// Roots verifies chains; nil means the system's roots.
	Roots *x509.CertPool
	// Concurrency bounds the endpoints probed at once; 0 means 8.
	Concurrency int
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
}

var _ collectors.Collector = (*Collector)(nil)

// Name implements collectors.Collector.
func (c *Collector) Name() string { return "tls" }

// Collect implements collectors.Collector: one tls.endpoint resource and one scope per
// target. An endpoint that cannot be reached is recorded as unreachable and its scope as
// failed, so that its earlier findings become unknown rather than resolved.
func (c *Collector) Collect(ctx context.Context, sink collectors.Sink) error {
	n := c.Concurrency
	if n <= 0 {
		n = 8
	}
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for _, t := range c.Targets {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return ctx.Err()
		}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			res, scope := c.probe(ctx, t)
			if err := emit(sink, res, scope); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// emit reports a probed endpoint's scope and, unless it failed, its resource: a failed
// scope lists no resources, since what could not be read is unknown, and the snapshot
// contract refuses a failed scope that lists any.
func emit(sink collectors.Sink, res snapshot.Resource, scope snapshot.Scope) error {
	var err error
	if scope.Status != snapshot.ScopeFailed {
		err = sink.Resource(res)
	}
	sink.Scope(scope)
	return err
}

// scopeID is the scope of a target's endpoint, "tls/HOST:PORT".
func (t Target) scopeID() string { return "tls/" + t.addr() }

var versions = []struct {
	v    uint16
	name string
}{
	{tls.VersionTLS10, "TLS1.0"}, {tls.VersionTLS11, "TLS1.1"}, {tls.VersionTLS12, "TLS1.2"}, {tls.VersionTLS13, "TLS1.3"},
}

// allSuites offers every cipher suite Go knows, insecure ones included, so that an old
// protocol version is detected whenever the endpoint would negotiate it with anyone.
func allSuites() []uint16 {
	var ids []uint16
	for _, s := range tls.CipherSuites() {
		ids = append(ids, s.ID)
	}
	for _, s := range tls.InsecureCipherSuites() {
		ids = append(ids, s.ID)
	}
	return ids
}

func (c *Collector) probe(ctx context.Context, t Target) (snapshot.Resource, snapshot.Scope) {
	id := t.addr()
	res := snapshot.Resource{UID: "tls://" + id, Type: "tls.endpoint", Name: id, Account: t.Host, Scope: t.scopeID(),
		Attributes: map[string]any{"host": t.Host, "port": t.Port, "sni": t.sni(), "reachable": false}}
	scope := snapshot.Scope{ID: res.Scope, Provider: "tls", Account: t.Host, Service: "tls", Status: snapshot.ScopeOK, Resources: 1}

	state, err := c.handshake(ctx, t, 0)
	if err != nil {
		scope.Status, scope.Error, scope.Resources = snapshot.ScopeFailed, err.Error(), 0
		return res, scope
	}
	certs := state.PeerCertificates
	if len(certs) == 0 {
		scope.Status, scope.Error, scope.Resources = snapshot.ScopeFailed, "the endpoint sent no certificate", 0
		return res, scope
	}
	a := res.Attributes
	a["reachable"] = true
	leaf := certs[0]
	a["certificate"] = certinfo.Describe(leaf)
	chain := make([]any, 0, len(certs)-1)
	inter := x509.NewCertPool()
	for _, ct := range certs[1:] {
		chain = append(chain, certinfo.Describe(ct))
		inter.AddCert(ct)
	}
	a["chain"] = chain
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	_, verr := leaf.Verify(x509.VerifyOptions{Roots: c.Roots, Intermediates: inter, CurrentTime: now()})
	a["trusted"] = verr == nil
	a["verify_error"] = ""
	if verr != nil {
		a["verify_error"] = verr.Error()
	}
	// The name to match is the one the client asked the server for: with an SNI, the
	// host is only where to connect (10.0.0.5:8443@api.example.com serves api.example.com).
	a["hostname_match"] = leaf.VerifyHostname(t.sni()) == nil

	var accepted []any
	for _, v := range versions {
		if v.v == state.Version {
			accepted = append(accepted, v.name)
			continue
		}
		if _, err := c.handshake(ctx, t, v.v); err == nil {
			accepted = append(accepted, v.name)
		} else if ctx.Err() != nil {
			break
		}
	}
	a["protocols"] = accepted
	if len(accepted) > 0 {
		a["min_protocol"] = accepted[0]
	}
	return res, scope
}

// handshake connects once; version 0 lets client and server agree on the best version.
func (c *Collector) handshake(ctx context.Context, t Target, version uint16) (tls.ConnectionState, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cfg := &tls.Config{
		ServerName: t.sni(),
		// The chain is verified afterwards, separately from the host name, so that an
		// untrusted or mismatched certificate is described rather than refused.
		InsecureSkipVerify: true, //nolint:gosec // verification is done by hand below
		MinVersion:         tls.VersionTLS10,
		CipherSuites:       allSuites(),
	}
	if version != 0 {
		cfg.MinVersion, cfg.MaxVersion = version, version
	}
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: cfg}
	conn, err := d.DialContext(ctx, "tcp", t.addr())
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return tls.ConnectionState{}, fmt.Errorf("connect %s: timed out after %s", t.addr(), timeout)
		}
		return tls.ConnectionState{}, fmt.Errorf("connect %s: %w", t.addr(), err)
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState(), nil
}

var _ collectors.Reader = (*Collector)(nil)

// Read implements collectors.Reader: it probes the endpoint of a tls:// uid again (with
// the SNI name of the matching target, if any), for the drift re-check and verification
// of a certificate renewal. An endpoint that cannot be reached is an error, never "gone":
// an outage must not pass for a fix. Other uids are collectors.ErrUnsupported.
func (c *Collector) Read(ctx context.Context, uid string) (snapshot.Resource, error) {
	addr, ok := strings.CutPrefix(uid, "tls://")
	if !ok {
		return snapshot.Resource{}, fmt.Errorf("read %s: %w", uid, collectors.ErrUnsupported)
	}
	t, err := ParseTarget(addr)
	if err != nil {
		return snapshot.Resource{}, fmt.Errorf("read %s: %w", uid, err)
	}
	for _, known := range c.Targets {
		if known.addr() == t.addr() {
			t = known
			break
		}
	}
	res, scope := c.probe(ctx, t)
	if scope.Status == snapshot.ScopeFailed {
		return snapshot.Resource{}, fmt.Errorf("read %s: %s", uid, scope.Error)
	}
	return res, nil
}
