package certinfo_test

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"strings"
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

// FuzzParsePEM: whatever an IAM server certificate body, an ACM export or a PEM file
// holds, ParsePEM never panics; what it describes has the resource model's fields, with
// RFC 3339 validity times, a hexadecimal serial and a key size that is not negative, and
// encodes as JSON (it goes into a snapshot).
func FuzzParsePEM(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	// Real certificates of each key type, so that mutations start from what parses.
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	for i, key := range []crypto.Signer{ec, ed} {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(int64(1000 + i)), Subject: pkix.Name{CommonName: "www.acme.example"},
			DNSNames: []string{"www.acme.example", "acme.example"}, NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
			NotAfter: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), IsCA: i == 1, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := certinfo.ParsePEM(s)
		if err != nil {
			if d != nil {
				t.Fatalf("ParsePEM(%q) = %v with error %v", s, d, err)
			}
			return
		}
		for _, k := range []string{"subject", "issuer", "serial", "not_before", "not_after", "dns_names", "key_algorithm",
			"key_size", "signature_algorithm", "self_signed", "is_ca"} {
			if _, ok := d[k]; !ok {
				t.Fatalf("description %v has no %s", d, k)
			}
		}
		for _, k := range []string{"not_before", "not_after"} {
			if _, err := time.Parse(time.RFC3339, d[k].(string)); err != nil {
				t.Fatalf("%s %q is not RFC 3339", k, d[k])
			}
		}
		if _, ok := new(big.Int).SetString(strings.TrimPrefix(d["serial"].(string), "-"), 16); !ok {
			t.Fatalf("serial %q is not hexadecimal", d["serial"])
		}
		if n, ok := d["key_size"].(int); !ok || n < 0 {
			t.Fatalf("key_size %v", d["key_size"])
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("description does not encode: %v", err)
		}
	})
}
