package cloudsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// minter signs the certificates a world describes by their fields, so that the simulator
// serves real X.509 that collectors parse. Keys and issuing CAs are shared per kind, as
// generating RSA keys is slow.
type minter struct {
	keys  map[string]crypto.Signer
	cas   map[string]*x509.Certificate
	caPEM map[string]string
}

func newMinter() *minter {
	return &minter{keys: map[string]crypto.Signer{}, cas: map[string]*x509.Certificate{}, caPEM: map[string]string{}}
}

// fill mints spec's PEM when only its fields are given.
func (m *minter) fill(spec *CertSpec) error {
	if spec.PEM != "" {
		return nil
	}
	if spec.Subject == "" {
		return fmt.Errorf("certificate: give pem, or subject and the fields to mint")
	}
	alg := strings.ToUpper(or(spec.KeyAlgorithm, "RSA"))
	key, err := m.key(alg, spec.KeySize)
	if err != nil {
		return err
	}
	sig, err := sigAlg(spec.SignatureAlgorithm, alg)
	if err != nil {
		return err
	}
	subject, err := parseDN(spec.Subject)
	if err != nil {
		return fmt.Errorf("subject: %w", err)
	}
	notBefore, notAfter := spec.NotBefore, spec.NotAfter
	if notBefore.IsZero() {
		notBefore = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if notAfter.IsZero() {
		notAfter = notBefore.AddDate(1, 0, 0)
	}
	serial := new(big.Int)
	if _, ok := serial.SetString(spec.Serial, 16); !ok || spec.Serial == "" {
		sum := sha1.Sum([]byte(spec.Subject + notAfter.String()))
		serial.SetBytes(sum[:16])
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: subject, NotBefore: notBefore, NotAfter: notAfter,
		DNSNames: spec.DNSNames, SignatureAlgorithm: sig, IsCA: spec.IsCA, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	parent, signer := tmpl, crypto.Signer(key)
	if spec.Issuer != "" && spec.Issuer != spec.Subject {
		parent, signer, err = m.ca(spec.Issuer, sig)
		if err != nil {
			return err
		}
		spec.Chain = m.caPEM[caKey(spec.Issuer, sig)]
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return fmt.Errorf("mint %s: %w", spec.Subject, err)
	}
	spec.PEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return nil
}

func caKey(issuer string, sig x509.SignatureAlgorithm) string { return issuer + "|" + sig.String() }

// ca returns the issuing CA named issuer, with a key that can make signatures of sig.
func (m *minter) ca(issuer string, sig x509.SignatureAlgorithm) (*x509.Certificate, crypto.Signer, error) {
	var alg string
	var size int
	switch s := sig.String(); {
	case strings.Contains(s, "RSA"):
		alg, size = "RSA", 2048
	case strings.HasPrefix(s, "ECDSA"):
		alg, size = "EC", 256
		if strings.HasSuffix(s, "384") {
			size = 384
		}
	default:
		alg = "ED25519"
	}
	key, err := m.key(alg, size)
	if err != nil {
		return nil, nil, err
	}
	k := caKey(issuer, sig)
	if c, ok := m.cas[k]; ok {
		return c, key, nil
	}
	name, err := parseDN(issuer)
	if err != nil {
		return nil, nil, fmt.Errorf("issuer: %w", err)
	}
	sum := sha1.Sum([]byte(k))
	tmpl := &x509.Certificate{
		SerialNumber: new(big.Int).SetBytes(sum[:8]), Subject: name,
		NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2035, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		SignatureAlgorithm: sig,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("mint issuer %s: %w", issuer, err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	m.cas[k] = c
	m.caPEM[k] = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return c, key, nil
}

func (m *minter) key(alg string, size int) (crypto.Signer, error) {
	k := fmt.Sprintf("%s/%d", alg, size)
	if key, ok := m.keys[k]; ok {
		return key, nil
	}
	var key crypto.Signer
	var err error
	switch alg {
	case "RSA":
		if size == 0 {
			size = 2048
		}
		key, err = rsa.GenerateKey(rand.Reader, size)
	case "EC", "ECDSA":
		var c elliptic.Curve
		switch size {
		case 0, 256:
			c = elliptic.P256()
		case 384:
			c = elliptic.P384()
		case 521:
			c = elliptic.P521()
		default:
			return nil, fmt.Errorf("EC key size %d: use 256, 384 or 521", size)
		}
		key, err = ecdsa.GenerateKey(c, rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("key algorithm %q: use RSA, EC or ED25519", alg)
	}
	if err != nil {
		return nil, fmt.Errorf("generate %s key: %w", k, err)
	}
	m.keys[k] = key
	return key, nil
}

// sigAlg finds the x509 signature algorithm by its Go name ("SHA256-RSA").
func sigAlg(name, keyAlg string) (x509.SignatureAlgorithm, error) {
	if name == "" {
		switch keyAlg {
		case "EC", "ECDSA":
			return x509.ECDSAWithSHA256, nil
		case "ED25519":
			return x509.PureEd25519, nil
		}
		return x509.SHA256WithRSA, nil
	}
	for a := x509.MD2WithRSA; a <= x509.PureEd25519; a++ {
		if strings.EqualFold(a.String(), name) {
			return a, nil
		}
	}
	return 0, fmt.Errorf("signature algorithm %q is not one of Go's x509 names (SHA256-RSA, ECDSA-SHA256, …)", name)
}

// parseDN reads "CN=x,O=y,C=z" (as pkix.Name.String writes it) into a name.
func parseDN(s string) (pkix.Name, error) {
	var n pkix.Name
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return n, fmt.Errorf("%q: want KEY=value pairs separated by commas", s)
		}
		switch strings.ToUpper(k) {
		case "CN":
			n.CommonName = v
		case "O":
			n.Organization = append(n.Organization, v)
		case "OU":
			n.OrganizationalUnit = append(n.OrganizationalUnit, v)
		case "C":
			n.Country = append(n.Country, v)
		case "L":
			n.Locality = append(n.Locality, v)
		case "ST":
			n.Province = append(n.Province, v)
		default:
			return n, fmt.Errorf("%q: attribute %s not supported (CN, O, OU, C, L, ST)", s, k)
		}
	}
	return n, nil
}
