package cloudsim

import (
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

func TestMint(t *testing.T) {
	m := newMinter()
	tests := []struct {
		name string
		spec CertSpec
		sig  string
		bits int
	}{
		{"rsa issued", CertSpec{Subject: "CN=shop.acme.example", Issuer: "CN=R11,O=Let's Encrypt,C=US", KeySize: 2048, SignatureAlgorithm: "SHA256-RSA"}, "SHA256-RSA", 2048},
		{"weak sha1", CertSpec{Subject: "CN=api.gcp.acme.example", Issuer: "CN=Acme Internal CA 2019,O=Acme Corp,C=GB", KeySize: 2048, SignatureAlgorithm: "SHA1-RSA"}, "SHA1-RSA", 2048},
		{"rsa 1024", CertSpec{Subject: "CN=old.acme.example", Issuer: "CN=Acme,O=Acme Corp", KeySize: 1024}, "SHA256-RSA", 1024},
		{"ec leaf, rsa issuer", CertSpec{Subject: "CN=grpc.acme.example", Issuer: "CN=Acme Issuing,OU=Security,O=Acme Corp,C=GB", KeyAlgorithm: "EC", KeySize: 384, SignatureAlgorithm: "SHA384-RSA"}, "SHA384-RSA", 384},
		{"self-signed ec", CertSpec{Subject: "CN=dev,O=Acme Dev", KeyAlgorithm: "EC", KeySize: 256}, "ECDSA-SHA256", 256},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec
			spec.NotAfter = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
			if err := m.fill(&spec); err != nil {
				t.Fatal(err)
			}
			b, _ := pem.Decode([]byte(spec.PEM))
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			if c.SignatureAlgorithm.String() != tc.sig || c.Subject.String() != tc.spec.Subject {
				t.Errorf("got %s %q, want %s %q", c.SignatureAlgorithm, c.Subject, tc.sig, tc.spec.Subject)
			}
			if tc.spec.Issuer != "" && c.Issuer.String() != tc.spec.Issuer {
				t.Errorf("issuer %q, want %q", c.Issuer, tc.spec.Issuer)
			}
		})
	}
}
