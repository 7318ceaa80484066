package cloudsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// What ACM reports of a certificate body (key and signature algorithms, serial, names,
// usages) is derived here from the certificate's PEM, in ACM's own vocabulary.

// awsEpoch is a time the AWS JSON protocols write as epoch seconds.
type awsEpoch time.Time

// MarshalJSON writes the time as a number of seconds, with milliseconds when there are any.
func (t awsEpoch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(time.Time(t).UnixMilli())/1000, 'f', -1, 64)), nil
}

func epochOf(t time.Time) *awsEpoch {
	if t.IsZero() {
		return nil
	}
	e := awsEpoch(t)
	return &e
}

// acmInfo is what ACM reports of a certificate body.
type acmInfo struct {
	x509    *x509.Certificate // nil while the certificate has no body
	keyAlg  string
	sigAlg  string
	domain  string
	sans    []string
	usages  []string
	ekus    []acmEKU
	serial  string
	subject string
	issuer  string
}

type acmEKU struct {
	Name string
	OID  string `json:"OID"`
}

func acmParsePEM(text string) (*x509.Certificate, error) {
	for rest := []byte(text); ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, fmt.Errorf("no PEM certificate found")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// acmDescribe derives the reported fields of c from its PEM, with the world's fields
// taking precedence.
func acmDescribe(c *Certificate) acmInfo {
	info := acmInfo{keyAlg: "RSA_2048", domain: c.Domain, sans: c.SANs}
	if c.Cert.PEM != "" {
		if x, err := acmParsePEM(c.Cert.PEM); err == nil {
			info.x509 = x
			info.keyAlg = acmKeyAlg(x.PublicKey)
			info.sigAlg = acmSigAlg(x.SignatureAlgorithm)
			info.serial = acmSerial(x.SerialNumber.Bytes())
			info.subject = x.Subject.String()
			info.issuer = x.Issuer.CommonName
			if len(x.Issuer.Organization) > 0 {
				info.issuer = x.Issuer.Organization[0]
			}
			if info.domain == "" {
				info.domain = or(x.Subject.CommonName, acmFirst(x.DNSNames))
			}
			if len(info.sans) == 0 {
				info.sans = x.DNSNames
			}
			info.usages, info.ekus = acmUsages(x)
		}
	}
	if c.Type == "AMAZON_ISSUED" {
		info.issuer = "Amazon"
	}
	if len(info.sans) == 0 && info.domain != "" {
		info.sans = []string{info.domain}
	}
	return info
}

func acmFirst(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// acmKeyAlg names a public key the way ACM does (RSA_2048, EC_prime256v1, …).
func acmKeyAlg(k crypto.PublicKey) string {
	switch k := k.(type) {
	case *rsa.PublicKey:
		return "RSA_" + strconv.Itoa(k.N.BitLen())
	case *ecdsa.PublicKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return "EC_prime256v1"
		case 384:
			return "EC_secp384r1"
		case 521:
			return "EC_secp521r1"
		}
	case ed25519.PublicKey:
		return "ED25519"
	}
	return "UNKNOWN"
}

// acmSigAlg names a signature algorithm the way ACM does: SHA256WITHRSA, SHA384WITHECDSA.
func acmSigAlg(a x509.SignatureAlgorithm) string {
	n := a.String()
	switch {
	case n == "Ed25519":
		return "ED25519"
	case strings.HasPrefix(n, "ECDSA-"):
		return strings.TrimPrefix(n, "ECDSA-") + "WITHECDSA"
	case strings.HasSuffix(n, "-RSAPSS"):
		return strings.TrimSuffix(n, "-RSAPSS") + "WITHRSAANDMGF1"
	}
	return strings.ReplaceAll(n, "-", "WITH")
}

// acmSerial writes a serial number as colon-separated hex bytes.
func acmSerial(b []byte) string {
	parts := make([]string, len(b))
	for i, x := range b {
		parts[i] = fmt.Sprintf("%02x", x)
	}
	return strings.Join(parts, ":")
}

func acmUsages(x *x509.Certificate) ([]string, []acmEKU) {
	var usages []string
	for _, u := range []struct {
		bit  x509.KeyUsage
		name string
	}{
		{x509.KeyUsageDigitalSignature, "DIGITAL_SIGNATURE"}, {x509.KeyUsageContentCommitment, "NON_REPUDIATION"},
		{x509.KeyUsageKeyEncipherment, "KEY_ENCIPHERMENT"}, {x509.KeyUsageDataEncipherment, "DATA_ENCIPHERMENT"},
		{x509.KeyUsageKeyAgreement, "KEY_AGREEMENT"}, {x509.KeyUsageCertSign, "CERTIFICATE_SIGNING"},
		{x509.KeyUsageCRLSign, "CRL_SIGNING"}, {x509.KeyUsageEncipherOnly, "ENCIPHER_ONLY"},
		{x509.KeyUsageDecipherOnly, "DECIPHER_ONLY"},
	} {
		if x.KeyUsage&u.bit != 0 {
			usages = append(usages, u.name)
		}
	}
	var ekus []acmEKU
	for _, e := range x.ExtKeyUsage {
		switch e {
		case x509.ExtKeyUsageServerAuth:
			ekus = append(ekus, acmEKU{"TLS_WEB_SERVER_AUTHENTICATION", "1.3.6.1.5.5.7.3.1"})
		case x509.ExtKeyUsageClientAuth:
			ekus = append(ekus, acmEKU{"TLS_WEB_CLIENT_AUTHENTICATION", "1.3.6.1.5.5.7.3.2"})
		case x509.ExtKeyUsageCodeSigning:
			ekus = append(ekus, acmEKU{"CODE_SIGNING", "1.3.6.1.5.5.7.3.3"})
		case x509.ExtKeyUsageEmailProtection:
			ekus = append(ekus, acmEKU{"EMAIL_PROTECTION", "1.3.6.1.5.5.7.3.4"})
		case x509.ExtKeyUsageTimeStamping:
			ekus = append(ekus, acmEKU{"TIME_STAMPING", "1.3.6.1.5.5.7.3.8"})
		case x509.ExtKeyUsageOCSPSigning:
			ekus = append(ekus, acmEKU{"OCSP_SIGNING", "1.3.6.1.5.5.7.3.9"})
		case x509.ExtKeyUsageAny:
			ekus = append(ekus, acmEKU{"ANY", "2.5.29.37.0"})
		}
	}
	return usages, ekus
}

// acmEligibility is the certificate's renewal eligibility: ACM renews the certificates it
// issued while they are in use.
func acmEligibility(c *Certificate) string {
	if c.RenewalEligibility != "" {
		return c.RenewalEligibility
	}
	if c.Type != "IMPORTED" && len(c.InUseBy) > 0 {
		return "ELIGIBLE"
	}
	return "INELIGIBLE"
}

// acmTimes are the created, issued and imported times: an imported certificate has only
// the last, one ACM issued the first two.
func acmTimes(c *Certificate, info acmInfo) (created, issued, imported *awsEpoch) {
	if c.Type == "IMPORTED" {
		return nil, nil, epochOf(c.Created)
	}
	created = epochOf(c.Created)
	if info.x509 != nil {
		issued = epochOf(info.x509.NotBefore)
	}
	return created, issued, nil
}

// acmCheckKey requires the private key of an imported certificate, and that it matches.
func acmCheckKey(x *x509.Certificate, keyPEM []byte) error {
	b, _ := pem.Decode(keyPEM)
	if b == nil {
		return errf(kindInvalid, "ValidationException", "The private key is missing or not PEM encoded")
	}
	var key any
	var err error
	switch b.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(b.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
	}
	if err != nil {
		return errf(kindInvalid, "ValidationException", "The private key is not supported: %v", err)
	}
	signer, ok := key.(crypto.Signer)
	pub, ok2 := x.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !ok2 || !pub.Equal(signer.Public()) {
		return errf(kindInvalid, "ValidationException", "The private key does not match the public key in the certificate")
	}
	return nil
}
