// Package certs renews certificates through ACME (certs.renew): it orders a new
// certificate for the same domains from the configured directory (lego, http-01 or
// dns-01), with a new key, and delivers it where the finding's certificate lives — back
// into ACM under the same ARN, or into the PEM files a server reads, followed by its
// reload command. What it replaces, and what it delivers, are archived first in
// warden's store, encrypted: a crash between issuing and delivering loses nothing, and
// a rollback restores the previous material (ACM cannot give a key back, so the archive
// is the only way back there).
package certs

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-acme/lego/v5/challenge"
	legolog "github.com/go-acme/lego/v5/log"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/internal/attr"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Action is the remediator's name, as the CERT policies give it.
const Action = "certs.renew"

// Renew is the certs.renew remediator.
type Renew struct {
	cfg      *Config
	sessions *awsapi.Sessions
	arch     *archive
	iss      *issuer
	now      func() time.Time

	// beforeDeliver, when set (tests), runs after the archive is written and before the
	// delivery; an error stops Apply there, as a crash would.
	beforeDeliver func(ctx context.Context, a remediators.Action) error
}

// Options are the optional dependencies of New.
type Options struct {
	// DNSProvider answers dns-01 challenges instead of the configured provider (a
	// provider warden was not built with, written against lego's challenge.Provider).
	DNSProvider challenge.Provider
	// Logger receives lego's progress messages (domains, never keys); nil discards
	// them. lego logs through one process-wide logger: New sets it.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns the remediator. cfg nil (no certs: section) makes a remediator for
// planning only: Targets finds ACM certificates and no endpoint, Apply refuses. Otherwise
// cfg must be valid; st nil (warden plan, which keeps no database) plans with the
// config's targets and refuses to apply; with st, where the archive lives, the archive
// key must load (file or WARDEN_CERTS_ARCHIVE_KEY), and s (may be nil without AWS)
// re-imports into ACM.
func New(cfg *Config, st *store.Store, s *awsapi.Sessions, o Options) (*Renew, error) {
	r := &Renew{cfg: cfg, sessions: s, now: o.Now}
	if r.now == nil {
		r.now = time.Now
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	legolog.SetDefault(logger)
	if cfg == nil {
		return r, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil {
		return r, nil // ready refuses to write: there is no archive
	}
	key, err := cfg.loadArchiveKey()
	if err != nil {
		return nil, err
	}
	r.arch = &archive{st: st, key: key, now: r.now}
	if r.iss, err = newIssuer(cfg, r.arch, o.DNSProvider); err != nil {
		return nil, err
	}
	return r, nil
}

var _ remediators.Remediator = (*Renew)(nil)

// Spec implements remediators.Remediator. The finding's resource is all it needs: no
// params.
func (*Renew) Spec() remediators.Spec {
	return remediators.Spec{
		Action: Action,
		// The CERT policies judge Google's SSL certificates too; a renewal cannot be
		// delivered to one yet, and Targets says so (remediators.ErrNotApplicable) so that
		// the plan shows a notice with the reason.
		ResourceTypes: []string{"aws.acm.certificate", "tls.endpoint", "gcp.compute.ssl_certificate"},
		// Files are restored from the archive; an ACM certificate only when warden holds
		// the previous key (it delivered it), which each ACM target's plan says
		// (Target.Rollback).
		Rollback: remediators.Rollback{Possible: true},
		// A certificate delivered to ACM is read back and re-imported under its ARN
		// (rollback imports the archived one). Files and the ACME server need no cloud
		// permission.
		Permissions: remediators.Permissions{AWS: []string{"acm:GetCertificate", "acm:ImportCertificate"}},
	}
}

// before is the part: the certificate now in place (never its key), its names, and
// where it is delivered.
type before struct {
	Serial   string     `json:"serial"`
	NotAfter string     `json:"not_after"`
	Domains  []string   `json:"domains"`
	ACM      string     `json:"acm,omitempty"`
	Files    *fileNames `json:"files,omitempty"`
}

type fileNames struct {
	Cert  string `json:"cert"`
	Key   string `json:"key"`
	Chain string `json:"chain,omitempty"`
}

// Part is the name of the part a certificate makes: a renewed certificate is another
// part, so the old one is gone once the renewal is in place.
func Part(serial string) string { return "certificate/" + serial }

// Targets is the certificate a renewal replaces: an imported ACM certificate (ACM renews
// the certificates it issued itself), or the certificate a TLS endpoint named in
// certs.targets serves. Others have no target warden can deliver to: none.
func (r *Renew) Targets(res snapshot.Resource, _ map[string]any) ([]remediators.Target, error) {
	cert := attr.Map(res.Attributes, "certificate")
	serial := attr.String(cert, "serial")
	if serial == "" {
		return nil, nil
	}
	b := before{Serial: serial, NotAfter: attr.String(cert, "not_after")}
	switch res.Type {
	case "aws.acm.certificate":
		if t := attr.String(res.Attributes, "cert_type"); t != "IMPORTED" {
			return nil, fmt.Errorf("%w: ACM renews the %s certificates it issued itself (check its validation records)", remediators.ErrNotApplicable, strings.ToLower(t))
		}
		b.ACM = res.UID
		b.Domains = uniq(append([]string{attr.String(res.Attributes, "domain_name")}, attr.Strings(res.Attributes, "subject_alternative_names")...))
	case "tls.endpoint":
		host := attr.String(res.Attributes, "host")
		port, _ := attr.Int(res.Attributes, "port")
		name := net.JoinHostPort(host, strconv.Itoa(port))
		if r.cfg == nil {
			return nil, fmt.Errorf("%w: no certs: section says where %s's certificate is delivered", remediators.ErrNotApplicable, name)
		}
		t, ok := r.cfg.Targets[name]
		if !ok {
			return nil, fmt.Errorf("%w: certs.targets does not list %s, so warden does not know where its certificate and key live", remediators.ErrNotApplicable, name)
		}
		b.Files = &fileNames{Cert: t.Files.Cert, Key: t.Files.Key, Chain: t.Files.Chain}
		b.Domains = uniq(t.Domains)
		if len(b.Domains) == 0 {
			b.Domains = uniq(attr.Strings(cert, "dns_names"))
		}
		if len(b.Domains) == 0 {
			sni := attr.String(res.Attributes, "sni")
			if sni == "" {
				sni = host
			}
			if net.ParseIP(sni) == nil {
				b.Domains = []string{sni}
			}
		}
	default:
		return nil, fmt.Errorf("%w: warden cannot deliver a renewed certificate to a %s", remediators.ErrNotApplicable, res.Type)
	}
	if len(b.Domains) == 0 {
		return nil, fmt.Errorf("certificate %s of %s names no domain to renew it for", serial, res.UID)
	}
	raw, err := attr.Canonical(b)
	if err != nil {
		return nil, err
	}
	t := remediators.Target{Part: Part(serial), Before: raw}
	if b.ACM != "" {
		t.Rollback = r.acmRollback(b.ACM, serial)
	}
	return []remediators.Target{t}, nil
}

// acmRollback says whether a re-import into ACM can be undone: only with the private key
// of the certificate in place, which ACM never returns, so only for a certificate warden
// delivered itself (its key is in the archive).
func (r *Renew) acmRollback(arn, serial string) *remediators.Rollback {
	no := &remediators.Rollback{Possible: false, Reason: "ACM never returns a private key: the certificate in place (serial " + serial +
		") can be imported again only if warden delivered it, and its key is not in warden's archive"}
	switch {
	case r.cfg == nil:
		// No certs: section: there is no archive whatever the database.
		no.Reason = "ACM never returns a private key: the certificate in place (serial " + serial +
			") can be imported again only if warden delivered it and archived its key, and the config has no certs: section " +
			"(the ACME directory, a challenge and archive_key_file; docs/remediation.md, 'Renewing a certificate'), so warden keeps no archive"
		return no
	case r.arch == nil:
		no.Reason = "ACM never returns a private key: the certificate in place (serial " + serial +
			") can be imported again only if warden delivered it and archived its key; this plan was made without warden's database, where the archive is (no --db)"
		return no
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ok, err := r.arch.holdsKey(ctx, arn, serial)
	if err != nil {
		no.Reason = err.Error()
		return no
	}
	if !ok {
		return no
	}
	return &remediators.Rollback{Possible: true}
}

func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// ready checks that the remediator can write.
func (r *Renew) ready() error {
	if r.cfg == nil {
		return errors.New("certs.renew is not configured: add a certs: section (directory, challenge, archive key) to the config")
	}
	if r.arch == nil {
		return errors.New("certs.renew: no database to archive the certificate it replaces in (give --db)")
	}
	return nil
}

func (r *Renew) decode(a remediators.Action) (before, target, error) {
	var b before
	if err := attr.Decode(a.Before, &b); err != nil {
		return b, nil, err
	}
	if b.Serial == "" || len(b.Domains) == 0 {
		return b, nil, fmt.Errorf("action %s: the before-state names no certificate", a.ID)
	}
	t, err := r.target(a, b)
	return b, t, err
}

// Apply renews the certificate: it archives what is in place, obtains a new certificate
// for the same domains (new key), archives it, and delivers it. Run again after a crash
// it finishes the delivery of the certificate it already obtained; when the target
// already holds a renewal of the planned certificate it returns ErrConverged.
func (r *Renew) Apply(ctx context.Context, a remediators.Action) error {
	return safe(r.apply(ctx, a))
}

// state is where an action starts from: the planned certificate, where it is
// delivered, what is there now, and the certificate the action obtained (nil until it
// did).
type state struct {
	b   before
	t   target
	cur *current
	iss *record
}

// load checks that the remediator can write and reads the action's state. It holds
// private keys: the caller wipes it when done.
func (r *Renew) load(ctx context.Context, a remediators.Action) (*state, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	b, t, err := r.decode(a)
	if err != nil {
		return nil, err
	}
	cur, err := t.read(ctx)
	if err != nil {
		return nil, err
	}
	iss, err := r.arch.get(ctx, a.ID, kindIssued)
	if err != nil {
		cur.m.wipe()
		return nil, err
	}
	return &state{b: b, t: t, cur: cur, iss: iss}, nil
}

// wipe clears the private keys the state holds.
func (s *state) wipe() {
	s.cur.m.wipe()
	if s.iss != nil {
		s.iss.M.wipe()
	}
}

func (r *Renew) apply(ctx context.Context, a remediators.Action) error {
	s, err := r.load(ctx, a)
	if err != nil {
		return err
	}
	defer s.wipe()
	b, t, cur, iss := s.b, s.t, s.cur, s.iss
	if cur.leaf == nil || serialOf(cur.leaf) != b.Serial {
		switch {
		case iss != nil && cur.leaf != nil && fingerprint(cur.leaf) == iss.Fingerprint && t.holds(cur, &iss.M):
			// Delivered by an earlier attempt, whose outcome was not recorded.
			if err := t.settle(ctx); err != nil {
				return err
			}
			return remediators.ErrConverged
		case iss != nil && (cur.leaf == nil || fingerprint(cur.leaf) == iss.Fingerprint):
			// Half delivered (a crash between two files): deliver it whole.
			return t.deliver(ctx, &iss.M)
		case cur.leaf != nil && renews(cur.leaf, b) && cur.consistent:
			return remediators.ErrConverged
		case cur.leaf == nil:
			return fmt.Errorf("%s holds no certificate (the planned one was serial %s): a fresh plan is needed", t, b.Serial)
		default:
			return fmt.Errorf("%s now holds certificate serial %s, not the planned %s nor a renewal of it: a fresh plan is needed", t, serialOf(cur.leaf), b.Serial)
		}
	}
	// The planned certificate is in place: archive it before anything changes.
	prev, err := r.arch.get(ctx, a.ID, kindPrevious)
	if err != nil {
		return err
	}
	if prev == nil {
		prev = &record{ActionID: a.ID, Target: t.id(), Kind: kindPrevious, Serial: b.Serial, Fingerprint: fingerprint(cur.leaf), M: cur.m}
		if prev.M.Key == "" && len(prev.M.Files) == 0 {
			// ACM: the key is known only if warden delivered this certificate itself.
			if prev.M.Key, err = r.arch.keyFor(ctx, t.id(), prev.Fingerprint); err != nil {
				return err
			}
		}
		if err := r.arch.put(ctx, prev); err != nil {
			return err
		}
	} else {
		prev.M.wipe()
	}
	if iss == nil || !r.usable(iss, b) {
		got, err := r.iss.obtain(ctx, b.Domains)
		if err != nil {
			return err
		}
		iss = &record{ActionID: a.ID, Target: t.id(), Kind: kindIssued, Serial: serialOf(got.leaf), Fingerprint: fingerprint(got.leaf), M: got.m}
		defer iss.M.wipe()
		if err := r.arch.replace(ctx, iss); err != nil {
			return err
		}
	}
	if r.beforeDeliver != nil {
		if err := r.beforeDeliver(ctx, a); err != nil {
			return err
		}
	}
	return t.deliver(ctx, &iss.M)
}

// usable reports whether an archived, undelivered certificate can still be delivered:
// valid now, for the planned names.
func (r *Renew) usable(iss *record, b before) bool {
	leaf, err := parseLeaf(iss.M.Cert)
	if err != nil || iss.M.Key == "" {
		return false
	}
	now := r.now()
	return now.After(leaf.NotBefore) && now.Before(leaf.NotAfter) && covers(leaf, b.Domains)
}

// Rollback restores the certificate the action replaced, from the archive: ACM gets the
// previous certificate and key again under the same ARN, files get their previous bytes
// (and the reload runs). ErrNoRollback (wrapped, with the reason) when the archive holds
// no previous key for ACM, or nothing for this action.
func (r *Renew) Rollback(ctx context.Context, a remediators.Action) error {
	return safe(r.rollback(ctx, a))
}

func (r *Renew) rollback(ctx context.Context, a remediators.Action) error {
	s, err := r.load(ctx, a)
	if err != nil {
		return err
	}
	defer s.wipe()
	b, t, cur, iss := s.b, s.t, s.cur, s.iss
	prev, err := r.arch.get(ctx, a.ID, kindPrevious)
	if err != nil {
		return err
	}
	if prev == nil {
		if cur.leaf != nil && serialOf(cur.leaf) == b.Serial {
			return nil // never replaced
		}
		return fmt.Errorf("%w: the archive holds nothing of action %s (it did not renew %s)", remediators.ErrNoRollback, a.ID, t)
	}
	defer prev.M.wipe()
	switch {
	case cur.leaf != nil && fingerprint(cur.leaf) == prev.Fingerprint:
		if t.holds(cur, &prev.M) {
			return t.settle(ctx)
		}
	case iss != nil && cur.leaf != nil && fingerprint(cur.leaf) == iss.Fingerprint:
	case cur.leaf == nil:
	default:
		return fmt.Errorf("%s now holds certificate serial %s, neither the renewal warden delivered nor the previous %s: warden will not overwrite it",
			t, serialOf(cur.leaf), prev.Serial)
	}
	if !prev.hasKey() {
		return fmt.Errorf("%w: ACM never returns a private key, and certificate serial %s was not delivered by warden, so its key is not in the archive: the previous certificate cannot be imported again",
			remediators.ErrNoRollback, prev.Serial)
	}
	return t.restore(ctx, &prev.M)
}

// Verify checks that the target holds the certificate the action delivered, whole (the
// files' key matches it): what a re-read of the resource will show.
func (r *Renew) Verify(ctx context.Context, a remediators.Action) error {
	s, err := r.load(ctx, a)
	if err != nil {
		return err
	}
	defer s.wipe()
	t, cur, iss := s.t, s.cur, s.iss
	if iss == nil {
		return fmt.Errorf("action %s delivered no certificate", a.ID)
	}
	if cur.leaf == nil || fingerprint(cur.leaf) != iss.Fingerprint || !t.holds(cur, &iss.M) {
		got := "nothing"
		if cur.leaf != nil {
			got = "serial " + serialOf(cur.leaf)
		}
		return fmt.Errorf("%s holds %s, not the renewed certificate serial %s", t, got, iss.Serial)
	}
	return nil
}

// renews reports whether c is a renewal of the planned certificate: it expires later and
// covers the same names.
func renews(c *x509.Certificate, b before) bool {
	old, err := time.Parse(time.RFC3339, b.NotAfter)
	return err == nil && c.NotAfter.After(old) && covers(c, b.Domains)
}

func covers(c *x509.Certificate, domains []string) bool {
	for _, d := range domains {
		if c.VerifyHostname(strings.TrimPrefix(d, "*.")) != nil && !slices.Contains(c.DNSNames, d) {
			return false
		}
	}
	return true
}

func serialOf(c *x509.Certificate) string { return c.SerialNumber.Text(16) }

func fingerprint(c *x509.Certificate) string {
	sum := sha256.Sum256(c.Raw)
	return hex.EncodeToString(sum[:])
}

// safe keeps private keys out of error messages, whatever a library or a reload
// command put in them.
func safe(err error) error {
	if err == nil || errors.Is(err, remediators.ErrConverged) {
		return err
	}
	msg := err.Error()
	if red := redactKeys(msg); red != msg {
		return redacted{msg: red, err: err}
	}
	return err
}

type redacted struct {
	msg string
	err error
}

func (r redacted) Error() string { return r.msg }
func (r redacted) Unwrap() error { return r.err }

// redactKeys replaces every PEM private key block (and a truncated one) in s.
func redactKeys(s string) string {
	var out strings.Builder
	for {
		i := strings.Index(s, "-----BEGIN ")
		if i < 0 {
			out.WriteString(s)
			return out.String()
		}
		hdrEnd := strings.Index(s[i+11:], "-----")
		if hdrEnd < 0 || !strings.Contains(s[i:i+11+hdrEnd], "PRIVATE KEY") {
			out.WriteString(s[:i+11])
			s = s[i+11:]
			continue
		}
		out.WriteString(s[:i])
		out.WriteString("[private key redacted]")
		rest := s[i+11+hdrEnd+5:]
		end := strings.Index(rest, "-----END ")
		if end < 0 {
			return out.String()
		}
		rest = rest[end+9:]
		if j := strings.Index(rest, "-----"); j >= 0 {
			rest = rest[j+5:]
		} else {
			rest = ""
		}
		s = rest
	}
}
