package gcp

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"
)

// selfSigned returns a PEM certificate for name, for seeds.
func selfSigned(tb testing.TB, name string) []byte {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// FuzzLeaf: whatever PEM chain Compute returns for an SSL certificate, leaf never
// panics, and what it returns is the first CERTIFICATE block of the chain, whatever
// other blocks (a key, garbage) come before it; nil when that block is not a certificate.
func FuzzLeaf(f *testing.F) {
	leafPEM, inter := selfSigned(f, "www.acme.example"), selfSigned(f, "Acme Intermediate")
	f.Add(string(leafPEM) + string(inter))
	f.Add("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n" + string(leafPEM))
	f.Add("-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n" + string(inter))
	f.Add("")
	f.Fuzz(func(t *testing.T, chain string) {
		got := leaf(chain)
		var first *pem.Block
		for rest := []byte(chain); ; {
			var b *pem.Block
			if b, rest = pem.Decode(rest); b == nil || b.Type == "CERTIFICATE" {
				first = b
				break
			}
		}
		switch {
		case first == nil && got != nil:
			t.Fatalf("leaf of a chain with no CERTIFICATE block = %s", got.Subject)
		case got != nil && !bytes.Equal(got.Raw, first.Bytes):
			t.Fatalf("leaf = %s, not the first CERTIFICATE block", got.Subject)
		case got == nil && first != nil:
			if _, err := x509.ParseCertificate(first.Bytes); err == nil {
				t.Fatal("leaf = nil, but the first CERTIFICATE block is a certificate")
			}
		}
	})
}
