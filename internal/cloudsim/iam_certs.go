package cloudsim

import (
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"slices"
	"strings"
)

// IAM server certificates.

// maxServerCertificates is IAM's default quota of server certificates per account.
const maxServerCertificates = 20

type xServerCertMeta struct {
	Arn                   string
	Expiration            *awsTime
	Path                  string
	ServerCertificateId   string
	ServerCertificateName string
	UploadDate            awsTime
}

func serverCertARN(acct string, c *ServerCertificate) string {
	return "arn:aws:iam::" + acct + ":server-certificate" + orPath(c.Path) + c.Name
}

func xmlServerCert(acct string, c *ServerCertificate) xServerCertMeta {
	x := xServerCertMeta{Arn: serverCertARN(acct, c), Path: orPath(c.Path), ServerCertificateId: c.ID,
		ServerCertificateName: c.Name, UploadDate: awsTime(c.Uploaded)}
	if cert, err := iamParseCertPEM(c.Cert.PEM); err == nil {
		x.Expiration = optTime(&cert.NotAfter)
	}
	return x
}

// iamParseCertPEM reads the first certificate of a PEM text.
func iamParseCertPEM(s string) (*x509.Certificate, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errf(kindInvalid, "MalformedCertificate", "Unable to parse certificate. Please ensure the certificate is in PEM format.")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return nil, errf(kindInvalid, "MalformedCertificate", "Unable to parse certificate: %v", err)
	}
	return c, nil
}

func findServerCert(a *Account, name string) *ServerCertificate {
	for _, c := range a.ServerCertificates {
		if strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// serverCertNamed finds the certificate the ServerCertificateName parameter names.
func serverCertNamed(a *Account, f url.Values) (*ServerCertificate, error) {
	name, err := iamRequired(f, "ServerCertificateName")
	if err != nil {
		return nil, err
	}
	c := findServerCert(a, name)
	if c == nil {
		return nil, noSuchEntity("The Server Certificate with name %s cannot be found.", name)
	}
	return c, nil
}

func (s *Sim) listServerCertificates(a *Account, _ *call, f url.Values) (any, error) {
	certs, pg, err := iamListByPath(f, a.ServerCertificates, func(c *ServerCertificate) string { return c.Path },
		func(c *ServerCertificate) xServerCertMeta { return xmlServerCert(a.ID, c) })
	if err != nil {
		return nil, err
	}
	return struct {
		iamPage
		ServerCertificateMetadataList []xServerCertMeta `xml:"ServerCertificateMetadataList>member"`
	}{pg, certs}, nil
}

func (s *Sim) getServerCertificate(a *Account, _ *call, f url.Values) (any, error) {
	c, err := serverCertNamed(a, f)
	if err != nil {
		return nil, err
	}
	type serverCert struct {
		CertificateBody           string
		CertificateChain          string `xml:",omitempty"`
		ServerCertificateMetadata xServerCertMeta
	}
	return struct{ ServerCertificate serverCert }{serverCert{c.Cert.PEM, c.Cert.Chain, xmlServerCert(a.ID, c)}}, nil
}

// uploadServerCertificate checks that the body and chain are PEM certificates and the key
// a PEM private key; the key is not kept.
func (s *Sim) uploadServerCertificate(a *Account, _ *call, f url.Values) (any, error) {
	name, err := iamName(f, "ServerCertificateName", 128)
	if err != nil {
		return nil, err
	}
	path, err := iamPath(f)
	if err != nil {
		return nil, err
	}
	body, err := iamRequired(f, "CertificateBody")
	if err != nil {
		return nil, err
	}
	key, err := iamRequired(f, "PrivateKey")
	if err != nil {
		return nil, err
	}
	if _, err := iamParseCertPEM(body); err != nil {
		return nil, err
	}
	chain := f.Get("CertificateChain")
	for rest := []byte(chain); len(strings.TrimSpace(string(rest))) > 0; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil, errf(kindInvalid, "MalformedCertificate", "Unable to parse certificate chain. Please ensure the chain is in PEM format.")
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return nil, errf(kindInvalid, "MalformedCertificate", "Unable to parse certificate chain: %v", err)
		}
	}
	if b, _ := pem.Decode([]byte(key)); b == nil || !strings.HasSuffix(b.Type, "PRIVATE KEY") {
		return nil, errf(kindInvalid, "MalformedCertificate", "Unable to parse private key. Please ensure the key is in PEM format.")
	}
	if findServerCert(a, name) != nil {
		return nil, alreadyExists("The Server Certificate with name %s already exists.", name)
	}
	if len(a.ServerCertificates) >= maxServerCertificates {
		return nil, limitExceeded("Cannot exceed quota for ServerCertificatesPerAccount: %d", maxServerCertificates)
	}
	c := &ServerCertificate{Name: name, Path: path, ID: makeID("ASCA", a.ID+"/server-certificate/"+name, 17),
		Uploaded: s.stamp(), Cert: CertSpec{PEM: body, Chain: chain}}
	a.ServerCertificates = append(a.ServerCertificates, c)
	return struct{ ServerCertificateMetadata xServerCertMeta }{xmlServerCert(a.ID, c)}, nil
}

func (s *Sim) deleteServerCertificate(a *Account, _ *call, f url.Values) (any, error) {
	c, err := serverCertNamed(a, f)
	if err != nil {
		return nil, err
	}
	a.ServerCertificates = slices.DeleteFunc(a.ServerCertificates, func(x *ServerCertificate) bool { return x == c })
	return nil, nil
}
