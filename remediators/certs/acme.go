package certs

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-acme/lego/v5/acme"
	"github.com/go-acme/lego/v5/certcrypto"
	"github.com/go-acme/lego/v5/certificate"
	"github.com/go-acme/lego/v5/challenge"
	"github.com/go-acme/lego/v5/challenge/dns01"
	"github.com/go-acme/lego/v5/challenge/http01"
	"github.com/go-acme/lego/v5/lego"
	execdns "github.com/go-acme/lego/v5/providers/dns/exec"
	"github.com/go-acme/lego/v5/registration"
)

// issuer obtains certificates from the configured ACME directory, one order at a time
// (the http-01 listener is one port).
type issuer struct {
	cfg    *Config
	arch   *archive
	client *http.Client
	dns    challenge.Provider // the dns-01 provider, when configured
	mu     sync.Mutex
}

// issued is a certificate fresh from the CA, with its new key.
type issued struct {
	leaf *x509.Certificate
	m    material
}

func newIssuer(cfg *Config, arch *archive, dns challenge.Provider) (*issuer, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CABundle != "" {
		b, err := os.ReadFile(cfg.CABundle)
		if err != nil {
			return nil, cfg.errorf("ca_bundle", "read: %v", errors.Unwrap(err))
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, cfg.errorf("ca_bundle", "%s holds no PEM certificate", cfg.CABundle)
		}
		tr.TLSClientConfig.RootCAs = pool
	}
	is := &issuer{cfg: cfg, arch: arch, client: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, dns: dns}
	if d := cfg.Challenge.DNS01; d != nil && is.dns == nil {
		p, err := dnsProvider(d)
		if err != nil {
			return nil, cfg.errorf("challenge.dns01.provider", "%v", err)
		}
		is.dns = p
	}
	return is, nil
}

// dnsProvider builds the configured lego DNS provider.
func dnsProvider(d *DNS01) (challenge.Provider, error) {
	switch d.Provider {
	case "exec":
		c := execdns.NewDefaultConfig()
		c.Program, c.Mode = d.Program, d.Mode
		if d.PropagationTimeout > 0 {
			c.PropagationTimeout = d.PropagationTimeout
		}
		return execdns.NewDNSProviderConfig(c)
	}
	return nil, fmt.Errorf("unknown DNS provider %q", d.Provider)
}

// user is the ACME account warden orders as.
type user struct {
	email string
	key   crypto.Signer
	reg   *acme.ExtendedAccount
}

func (u *user) GetEmail() string                       { return u.email }
func (u *user) GetRegistration() *acme.ExtendedAccount { return u.reg }
func (u *user) GetPrivateKey() crypto.Signer           { return u.key }

var _ registration.User = (*user)(nil)

// accountKey returns the ACME account key of this directory and email, made and
// archived (encrypted) on first use so that every renewal orders as the same account.
func (is *issuer) accountKey(ctx context.Context) (crypto.Signer, error) {
	sum := sha256.Sum256([]byte(is.cfg.Directory + "\x00" + is.cfg.Email))
	id := "acme-account:" + hex.EncodeToString(sum[:8])
	for range 2 {
		r, err := is.arch.get(ctx, id, kindAccount)
		if err != nil {
			return nil, err
		}
		if r != nil {
			defer r.M.wipe()
			k, err := certcrypto.ParsePEMPrivateKey([]byte(r.M.Key))
			if err != nil {
				return nil, errors.New("the archived ACME account key does not parse")
			}
			return k, nil
		}
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, err
		}
		m := material{Key: string(certcrypto.PEMEncode(k))}
		// Two renewals at once both make a key; the first archived wins, and both read it.
		if err := is.arch.put(ctx, &record{ActionID: id, Target: is.cfg.Directory, Kind: kindAccount, M: m}); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("the ACME account key could not be archived")
}

// obtain orders a certificate for domains, with a new key, and answers the challenges.
func (is *issuer) obtain(ctx context.Context, domains []string) (*issued, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	acctKey, err := is.accountKey(ctx)
	if err != nil {
		return nil, err
	}
	u := &user{email: is.cfg.Email, key: acctKey}
	lc := lego.NewConfig(u)
	lc.CADirURL = is.cfg.Directory
	lc.HTTPClient = is.client
	lc.UserAgent = "warden"
	client, err := lego.NewClient(lc)
	if err != nil {
		return nil, fmt.Errorf("ACME directory %s: %w", is.cfg.Directory, err)
	}
	switch {
	case is.cfg.Challenge.HTTP01 != nil:
		host, port, _ := net.SplitHostPort(is.cfg.Challenge.HTTP01.Listen)
		if err := client.Challenge.SetHTTP01Provider(http01.NewProviderServer(host, port)); err != nil {
			return nil, fmt.Errorf("http-01 on %s: %w", is.cfg.Challenge.HTTP01.Listen, err)
		}
	case is.dns != nil:
		var opts []dns01.ChallengeOption
		if w := is.cfg.Challenge.DNS01.PropagationWait; w > 0 {
			opts = append(opts, dns01.PropagationWait(w, true))
		}
		if err := client.Challenge.SetDNS01Provider(is.dns, opts...); err != nil {
			return nil, fmt.Errorf("dns-01 through %s: %w", is.cfg.Challenge.DNS01.Provider, err)
		}
	default:
		return nil, errors.New("no ACME challenge configured")
	}
	reg, err := client.Registration.Register(ctx, registration.RegisterOptions{TermsOfServiceAgreed: true})
	if err != nil {
		return nil, fmt.Errorf("register the ACME account with %s: %w", is.cfg.Directory, err)
	}
	u.reg = reg
	key, err := certcrypto.GeneratePrivateKey(certcrypto.KeyType(is.cfg.keyType()))
	if err != nil {
		return nil, fmt.Errorf("make the certificate key: %w", err)
	}
	res, err := client.Certificate.Obtain(ctx, certificate.ObtainRequest{Domains: domains, PrivateKey: key})
	if err != nil {
		return nil, fmt.Errorf("obtain a certificate for %v from %s: %w", domains, is.cfg.Directory, err)
	}
	certs, err := certcrypto.ParsePEMBundle(res.Certificate)
	if err != nil || len(certs) == 0 {
		return nil, fmt.Errorf("the CA's certificate for %v does not parse: %v", domains, err)
	}
	leaf := certs[0]
	chain := res.IssuerCertificate
	if len(certs) > 1 { // a bundle after all: split it
		chain = nil
		for _, c := range certs[1:] {
			chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})...)
		}
	}
	return &issued{leaf: leaf, m: material{
		Cert:  string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leaf.Raw})),
		Chain: string(chain),
		Key:   string(certcrypto.PEMEncode(key)),
	}}, nil
}
