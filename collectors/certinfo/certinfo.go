// Package certinfo describes X.509 certificates in the resource model's shape
// (docs/resources.md, "Certificate"), for every collector that finds certificates: TLS
// endpoints, IAM server certificates, ACM, GCP SSL certificates.
package certinfo

import (
	"crypto/dsa" //nolint:staticcheck // to name DSA keys found in the wild
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"time"
)

// ParsePEM describes the first certificate of a PEM bundle.
func ParsePEM(s string) (map[string]any, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, err
	}
	return Describe(c), nil
}

// Describe is a certificate in the resource model's shape (docs/resources.md).
func Describe(c *x509.Certificate) map[string]any {
	alg, size := keyInfo(c)
	names := make([]any, len(c.DNSNames))
	for i, n := range c.DNSNames {
		names[i] = n
	}
	return map[string]any{
		"subject": c.Subject.String(), "issuer": c.Issuer.String(), "serial": c.SerialNumber.Text(16),
		"not_before": c.NotBefore.UTC().Format(time.RFC3339), "not_after": c.NotAfter.UTC().Format(time.RFC3339),
		"dns_names": names, "key_algorithm": alg, "key_size": size,
		"signature_algorithm": c.SignatureAlgorithm.String(), "self_signed": selfSigned(c), "is_ca": c.IsCA,
	}
}

func keyInfo(c *x509.Certificate) (string, int) {
	switch k := c.PublicKey.(type) {
	case *rsa.PublicKey:
		return "RSA", k.N.BitLen()
	case *ecdsa.PublicKey:
		return "EC", k.Curve.Params().BitSize
	case ed25519.PublicKey:
		return "ED25519", 256
	case *dsa.PublicKey:
		return "DSA", k.P.BitLen()
	}
	return c.PublicKeyAlgorithm.String(), 0
}

func selfSigned(c *x509.Certificate) bool {
	// CheckSignatureFrom would demand that c be a CA; a self-signed leaf is not.
	return c.Subject.String() == c.Issuer.String() && c.CheckSignature(c.SignatureAlgorithm, c.RawTBSCertificate, c.Signature) == nil
}
