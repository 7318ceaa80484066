package certinfo_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/warden-sec/warden/collectors/certinfo"
)

func TestParsePEM(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Acme CA", Organization: []string{"Acme"}},
		NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(0xabc), Subject: pkix.Name{CommonName: "shop.example"}, DNSNames: []string{"shop.example"},
		NotBefore: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2026, 5, 2, 0, 0, 0, 0, time.UTC)}
	mint := func(tmpl, parent *x509.Certificate, signer crypto.Signer) string {
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
		if err != nil {
			t.Fatal(err)
		}
		return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	}
	tests := []struct {
		name string
		pem  string
		want map[string]any
	}{
		{"issued leaf", mint(leaf, ca, key), map[string]any{"subject": "CN=shop.example", "issuer": "CN=Acme CA,O=Acme", "serial": "abc",
			"key_algorithm": "EC", "key_size": 384, "signature_algorithm": "ECDSA-SHA384", "self_signed": false, "is_ca": false,
			"not_after": "2026-05-02T00:00:00Z"}},
		{"self-signed CA", mint(ca, ca, key), map[string]any{"subject": "CN=Acme CA,O=Acme", "self_signed": true, "is_ca": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := certinfo.ParsePEM(tc.pem)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
	for _, bad := range []string{"", "not pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"} {
		if _, err := certinfo.ParsePEM(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func FuzzParsePEM(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = certinfo.ParsePEM(s)
	})
}
