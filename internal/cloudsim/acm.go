package cloudsim

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha1"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// acmHandlers serves the ACM actions warden reads and changes. Certificates are regional:
// a call sees the certificates of its SigV4 region.
func (s *Sim) acmHandlers() map[string]jsonHandler {
	return map[string]jsonHandler{
		"ListCertificates":          s.acmListCertificates,
		"DescribeCertificate":       s.acmDescribeCertificate,
		"GetCertificate":            s.acmGetCertificate,
		"ImportCertificate":         s.acmImportCertificate,
		"DeleteCertificate":         s.acmDeleteCertificate,
		"RenewCertificate":          s.acmRenewCertificate,
		"ListTagsForCertificate":    s.acmListTags,
		"AddTagsToCertificate":      s.acmAddTags,
		"RemoveTagsFromCertificate": s.acmRemoveTags,
		"UpdateCertificateOptions":  s.acmUpdateOptions,
	}
}

// regionalAccount is the caller's account, provided the call's region is enabled in it
// (ACM, Secrets Manager).
func (s *Sim) regionalAccount(c *call) (*Account, error) {
	a, err := s.account(c)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(a.Regions, c.Region) {
		return nil, errf(kindInvalid, "UnrecognizedClientException", "The security token included in the request is invalid.")
	}
	return a, nil
}

func acmARN(a *Account, c *Certificate) string {
	return "arn:aws:acm:" + c.Region + ":" + a.ID + ":certificate/" + c.ID
}

// acmFind resolves a CertificateArn within the call's account and region.
func (s *Sim) acmFind(c *call, arn string) (*Account, *Certificate, error) {
	a, err := s.regionalAccount(c)
	if err != nil {
		return nil, nil, err
	}
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "acm" || !strings.HasPrefix(parts[5], "certificate/") {
		return nil, nil, errf(kindInvalid, "InvalidArnException", "String '%s' is not a valid ARN", arn)
	}
	id := strings.TrimPrefix(parts[5], "certificate/")
	if parts[3] == c.Region && parts[4] == a.ID {
		for _, cert := range a.Certificates {
			if cert.Region == c.Region && cert.ID == id {
				return a, cert, nil
			}
		}
	}
	return nil, nil, errf(kindNotFound, "ResourceNotFoundException", "Could not find certificate %s.", arn)
}

// acmCertNamed decodes a request that names one certificate and nothing else
// (DescribeCertificate, GetCertificate, DeleteCertificate, RenewCertificate,
// ListTagsForCertificate) and finds it as acmFind does; arn is the ARN as given.
func (s *Sim) acmCertNamed(c *call, body []byte) (arn string, a *Account, cert *Certificate, err error) {
	var in struct{ CertificateArn string }
	if err := decodeJSON(body, &in); err != nil {
		return "", nil, nil, err
	}
	a, cert, err = s.acmFind(c, in.CertificateArn)
	return in.CertificateArn, a, cert, err
}

type acmSummary struct {
	CertificateArn                       string
	DomainName                           string
	SubjectAlternativeNameSummaries      []string
	HasAdditionalSubjectAlternativeNames bool
	Status                               string
	Type                                 string
	KeyAlgorithm                         string
	KeyUsages                            []string `json:",omitempty"`
	ExtendedKeyUsages                    []string `json:",omitempty"`
	InUse                                bool
	RenewalEligibility                   string
	NotBefore                            *awsEpoch `json:",omitempty"`
	NotAfter                             *awsEpoch `json:",omitempty"`
	CreatedAt                            *awsEpoch `json:",omitempty"`
	IssuedAt                             *awsEpoch `json:",omitempty"`
	ImportedAt                           *awsEpoch `json:",omitempty"`
}

type acmListResult struct {
	CertificateSummaryList []acmSummary
	NextToken              string `json:",omitempty"`
}

func (s *Sim) acmListCertificates(c *call, body []byte) (any, error) {
	var in struct {
		CertificateStatuses []string
		Includes            *struct {
			KeyTypes []string `json:"keyTypes"`
		}
		NextToken string
		MaxItems  *int
		SortBy    string
		SortOrder string
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	a, err := s.regionalAccount(c)
	if err != nil {
		return nil, err
	}
	size := 1000
	if in.MaxItems != nil {
		if *in.MaxItems < 1 || *in.MaxItems > 1000 {
			return nil, errf(kindInvalid, "ValidationException", "1 validation error detected: Value '%d' at 'maxItems' failed to satisfy constraint: Member must have value between 1 and 1000", *in.MaxItems)
		}
		size = *in.MaxItems
	}
	// Without Includes.keyTypes ACM lists only RSA_2048 certificates.
	keyTypes := []string{"RSA_2048"}
	if in.Includes != nil && len(in.Includes.KeyTypes) > 0 {
		keyTypes = in.Includes.KeyTypes
	}
	var list []*Certificate
	for _, cert := range a.Certificates {
		if cert.Region != c.Region {
			continue
		}
		if len(in.CertificateStatuses) > 0 && !slices.Contains(in.CertificateStatuses, cert.Status) {
			continue
		}
		if !slices.Contains(keyTypes, acmDescribe(cert).keyAlg) {
			continue
		}
		list = append(list, cert)
	}
	if in.SortBy == "CREATED_AT" {
		sort.SliceStable(list, func(i, j int) bool {
			if in.SortOrder == "DESCENDING" {
				return list[j].Created.Before(list[i].Created)
			}
			return list[i].Created.Before(list[j].Created)
		})
	}
	off, ok := offsetFromToken(in.NextToken)
	if !ok {
		return nil, errf(kindInvalid, "InvalidArgsException", "The NextToken is not valid")
	}
	start, end, next := offsetWindow(len(list), off, size)
	res := &acmListResult{CertificateSummaryList: []acmSummary{}, NextToken: next}
	for _, cert := range list[start:end] {
		info := acmDescribe(cert)
		sum := acmSummary{CertificateArn: acmARN(a, cert), DomainName: info.domain,
			SubjectAlternativeNameSummaries: info.sans, Status: cert.Status, Type: cert.Type,
			KeyAlgorithm: info.keyAlg, KeyUsages: info.usages, InUse: len(cert.InUseBy) > 0,
			RenewalEligibility: acmEligibility(cert)}
		for _, e := range info.ekus {
			sum.ExtendedKeyUsages = append(sum.ExtendedKeyUsages, e.Name)
		}
		if info.x509 != nil {
			sum.NotBefore, sum.NotAfter = epochOf(info.x509.NotBefore), epochOf(info.x509.NotAfter)
		}
		sum.CreatedAt, sum.IssuedAt, sum.ImportedAt = acmTimes(cert, info)
		res.CertificateSummaryList = append(res.CertificateSummaryList, sum)
	}
	return res, nil
}

type acmDetail struct {
	CertificateArn          string
	DomainName              string
	SubjectAlternativeNames []string
	DomainValidationOptions []acmValidation `json:",omitempty"`
	Serial                  string          `json:",omitempty"`
	Subject                 string          `json:",omitempty"`
	Issuer                  string          `json:",omitempty"`
	CreatedAt               *awsEpoch       `json:",omitempty"`
	IssuedAt                *awsEpoch       `json:",omitempty"`
	ImportedAt              *awsEpoch       `json:",omitempty"`
	Status                  string
	NotBefore               *awsEpoch `json:",omitempty"`
	NotAfter                *awsEpoch `json:",omitempty"`
	KeyAlgorithm            string
	SignatureAlgorithm      string `json:",omitempty"`
	InUseBy                 []string
	Type                    string
	RenewalSummary          *acmRenewal `json:",omitempty"`
	KeyUsages               []acmName   `json:",omitempty"`
	ExtendedKeyUsages       []acmEKU    `json:",omitempty"`
	RenewalEligibility      string
	Options                 acmOptions
}

type acmValidation struct {
	DomainName       string
	ValidationDomain string
	ValidationStatus string
	ValidationMethod string
}

type acmRenewal struct {
	RenewalStatus           string
	DomainValidationOptions []acmValidation
	RenewalStatusReason     string `json:",omitempty"`
	UpdatedAt               *awsEpoch
}

type acmName struct{ Name string }

type acmOptions struct {
	CertificateTransparencyLoggingPreference string
}

func (s *Sim) acmDescribeCertificate(c *call, body []byte) (any, error) {
	_, a, cert, err := s.acmCertNamed(c, body)
	if err != nil {
		return nil, err
	}
	info := acmDescribe(cert)
	d := acmDetail{CertificateArn: acmARN(a, cert), DomainName: info.domain, SubjectAlternativeNames: info.sans,
		Serial: info.serial, Subject: info.subject, Issuer: info.issuer, Status: cert.Status,
		KeyAlgorithm: info.keyAlg, SignatureAlgorithm: info.sigAlg, InUseBy: slices.Clone(cert.InUseBy),
		Type: cert.Type, ExtendedKeyUsages: info.ekus, RenewalEligibility: acmEligibility(cert),
		Options: acmOptions{CertificateTransparencyLoggingPreference: or(cert.TransparencyLogging, "ENABLED")}}
	if d.InUseBy == nil {
		d.InUseBy = []string{}
	}
	for _, u := range info.usages {
		d.KeyUsages = append(d.KeyUsages, acmName{u})
	}
	if info.x509 != nil {
		d.NotBefore, d.NotAfter = epochOf(info.x509.NotBefore), epochOf(info.x509.NotAfter)
	}
	d.CreatedAt, d.IssuedAt, d.ImportedAt = acmTimes(cert, info)
	if cert.Type != "IMPORTED" {
		st := "SUCCESS"
		if cert.Status == "PENDING_VALIDATION" {
			st = "PENDING_VALIDATION"
		}
		for _, n := range info.sans {
			d.DomainValidationOptions = append(d.DomainValidationOptions, acmValidation{DomainName: n,
				ValidationDomain: n, ValidationStatus: st, ValidationMethod: "DNS"})
		}
	}
	if cert.RenewalStatus != "" {
		updated := cert.Created
		if info.x509 != nil && info.x509.NotBefore.After(updated) {
			updated = info.x509.NotBefore
		}
		d.RenewalSummary = &acmRenewal{RenewalStatus: cert.RenewalStatus, DomainValidationOptions: d.DomainValidationOptions,
			RenewalStatusReason: cert.RenewalFailureReason, UpdatedAt: epochOf(updated)}
		if d.RenewalSummary.DomainValidationOptions == nil {
			d.RenewalSummary.DomainValidationOptions = []acmValidation{}
		}
	}
	return map[string]any{"Certificate": d}, nil
}

func (s *Sim) acmGetCertificate(c *call, body []byte) (any, error) {
	arn, _, cert, err := s.acmCertNamed(c, body)
	if err != nil {
		return nil, err
	}
	// A certificate ACM has not issued yet (or failed to issue) has no body to return.
	if slices.Contains([]string{"PENDING_VALIDATION", "FAILED", "VALIDATION_TIMED_OUT"}, cert.Status) || cert.Cert.PEM == "" {
		return nil, errf(kindInvalid, "RequestInProgressException", "Certificate %s is not in ISSUED state", arn)
	}
	out := map[string]string{"Certificate": cert.Cert.PEM}
	if cert.Cert.Chain != "" {
		out["CertificateChain"] = cert.Cert.Chain
	}
	return out, nil
}

type acmTag struct {
	Key   string
	Value string `json:",omitempty"`
}

func (s *Sim) acmImportCertificate(c *call, body []byte) (any, error) {
	var in struct {
		CertificateArn   string
		Certificate      []byte
		PrivateKey       []byte
		CertificateChain []byte
		Tags             []acmTag
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	a, err := s.regionalAccount(c)
	if err != nil {
		return nil, err
	}
	var cert *Certificate
	if in.CertificateArn != "" {
		if _, cert, err = s.acmFind(c, in.CertificateArn); err != nil {
			return nil, err
		}
		if cert.Type != "IMPORTED" {
			return nil, errf(kindInvalid, "ValidationException", "Certificate %s was not imported and cannot be reimported", in.CertificateArn)
		}
		if len(in.Tags) > 0 {
			return nil, errf(kindInvalid, "ValidationException", "Tags cannot be specified when reimporting a certificate")
		}
	}
	x, err := acmParsePEM(string(in.Certificate))
	if err != nil {
		return nil, errf(kindInvalid, "ValidationException", "Could not parse the certificate: %v", err)
	}
	if err := acmCheckKey(x, in.PrivateKey); err != nil {
		return nil, err
	}
	if alg := acmKeyAlg(x.PublicKey); alg == "ED25519" || alg == "UNKNOWN" {
		return nil, errf(kindInvalid, "ValidationException", "The certificate key algorithm is not supported")
	}
	if now := s.now(); now.Before(x.NotBefore) || now.After(x.NotAfter) {
		return nil, errf(kindInvalid, "ValidationException", "The certificate is not valid at the time of import (valid %s to %s)",
			x.NotBefore.UTC().Format(time.RFC3339), x.NotAfter.UTC().Format(time.RFC3339))
	}
	if len(in.CertificateChain) > 0 {
		if _, err := acmParsePEM(string(in.CertificateChain)); err != nil {
			return nil, errf(kindInvalid, "ValidationException", "Could not parse the certificate chain: %v", err)
		}
	}
	if cert == nil {
		sum := sha1.Sum([]byte(fmt.Sprintf("%s/%s/acm/%d", a.ID, c.Region, s.nextID())))
		h := hex.EncodeToString(sum[:])
		cert = &Certificate{ID: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32],
			Region: c.Region, Type: "IMPORTED"}
		for _, t := range in.Tags {
			if cert.Tags == nil {
				cert.Tags = map[string]string{}
			}
			cert.Tags[t.Key] = t.Value
		}
		a.Certificates = append(a.Certificates, cert)
	}
	cert.Domain = or(x.Subject.CommonName, acmFirst(x.DNSNames))
	cert.SANs = slices.Clone(x.DNSNames)
	cert.Status = "ISSUED"
	cert.Created = s.now().UTC().Truncate(time.Second)
	cert.RenewalEligibility = "INELIGIBLE"
	cert.Cert = CertSpec{PEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: x.Raw})),
		Chain: string(in.CertificateChain)}
	return map[string]string{"CertificateArn": acmARN(a, cert)}, nil
}

func (s *Sim) acmDeleteCertificate(c *call, body []byte) (any, error) {
	arn, a, cert, err := s.acmCertNamed(c, body)
	if err != nil {
		return nil, err
	}
	if len(cert.InUseBy) > 0 {
		return nil, errf(kindInvalid, "ResourceInUseException", "Certificate %s is in use by %s", arn, strings.Join(cert.InUseBy, ", "))
	}
	a.Certificates = slices.DeleteFunc(a.Certificates, func(x *Certificate) bool { return x == cert })
	return nil, nil
}

// acmRenewCertificate renews a certificate ACM issued: the simulator mints a new body with
// the same names and key type, valid from now for 395 days, as a completed managed renewal.
func (s *Sim) acmRenewCertificate(c *call, body []byte) (any, error) {
	arn, _, cert, err := s.acmCertNamed(c, body)
	if err != nil {
		return nil, err
	}
	if cert.Type != "AMAZON_ISSUED" && cert.Type != "PRIVATE" {
		return nil, errf(kindInvalid, "ValidationException", "Certificate %s is not eligible for renewal: only certificates issued by ACM can be renewed", arn)
	}
	x, err := acmParsePEM(cert.Cert.PEM)
	if err != nil {
		return nil, errf(kindInvalid, "RequestInProgressException", "Certificate %s has not been issued yet", arn)
	}
	spec := CertSpec{Subject: x.Subject.String(), DNSNames: x.DNSNames, SignatureAlgorithm: x.SignatureAlgorithm.String(),
		NotBefore: s.now().UTC().Truncate(time.Second)}
	if _, err := parseDN(spec.Subject); err != nil || spec.Subject == "" {
		spec.Subject = "CN=" + cert.Domain
	}
	if x.Issuer.String() != x.Subject.String() {
		spec.Issuer = x.Issuer.String()
		if _, err := parseDN(spec.Issuer); err != nil {
			spec.Issuer = "CN=Amazon RSA 2048 M03,O=Amazon,C=US"
		}
	}
	spec.NotAfter = spec.NotBefore.AddDate(0, 0, 395)
	switch k := x.PublicKey.(type) {
	case *rsa.PublicKey:
		spec.KeyAlgorithm, spec.KeySize = "RSA", k.N.BitLen()
	case *ecdsa.PublicKey:
		spec.KeyAlgorithm, spec.KeySize = "EC", k.Curve.Params().BitSize
	case ed25519.PublicKey:
		spec.KeyAlgorithm = "ED25519"
	}
	if err := newMinter().fill(&spec); err != nil {
		return nil, errf(kindInternal, "InternalFailure", "renew: %v", err)
	}
	cert.Cert = spec
	cert.Status = "ISSUED"
	cert.RenewalStatus = "SUCCESS"
	cert.RenewalFailureReason = ""
	return nil, nil
}

func (s *Sim) acmListTags(c *call, body []byte) (any, error) {
	_, _, cert, err := s.acmCertNamed(c, body)
	if err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(cert.Tags))
	for k := range cert.Tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := make([]acmTag, 0, len(keys))
	for _, k := range keys {
		tags = append(tags, acmTag{Key: k, Value: cert.Tags[k]})
	}
	return map[string]any{"Tags": tags}, nil
}

func (s *Sim) acmAddTags(c *call, body []byte) (any, error) {
	var in struct {
		CertificateArn string
		Tags           []acmTag
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	_, cert, err := s.acmFind(c, in.CertificateArn)
	if err != nil {
		return nil, err
	}
	if len(in.Tags) == 0 {
		return nil, errf(kindInvalid, "ValidationException", "Tags must not be empty")
	}
	for _, t := range in.Tags {
		if t.Key == "" || strings.HasPrefix(t.Key, "aws:") {
			return nil, errf(kindInvalid, "InvalidTagException", "Tag key '%s' is not valid", t.Key)
		}
	}
	n := len(cert.Tags)
	for _, t := range in.Tags {
		if _, ok := cert.Tags[t.Key]; !ok {
			n++
		}
	}
	if n > 50 {
		return nil, errf(kindInvalid, "TooManyTagsException", "A certificate can have at most 50 tags")
	}
	if cert.Tags == nil {
		cert.Tags = map[string]string{}
	}
	for _, t := range in.Tags {
		cert.Tags[t.Key] = t.Value
	}
	return nil, nil
}

func (s *Sim) acmRemoveTags(c *call, body []byte) (any, error) {
	var in struct {
		CertificateArn string
		Tags           []struct {
			Key   string
			Value *string
		}
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	_, cert, err := s.acmFind(c, in.CertificateArn)
	if err != nil {
		return nil, err
	}
	for _, t := range in.Tags {
		if t.Value != nil && cert.Tags[t.Key] != *t.Value {
			continue // a value given must match
		}
		delete(cert.Tags, t.Key)
	}
	return nil, nil
}

// acmUpdateOptions answers UpdateCertificateOptions: the certificate transparency logging
// preference, ENABLED or DISABLED.
func (s *Sim) acmUpdateOptions(c *call, body []byte) (any, error) {
	var in struct {
		CertificateArn string
		Options        *acmOptions
	}
	if err := decodeJSON(body, &in); err != nil {
		return nil, err
	}
	if in.Options == nil {
		return nil, errf(kindInvalid, "ValidationException", "1 validation error detected: Value null at 'options' failed to satisfy constraint: Member must not be null")
	}
	pref := in.Options.CertificateTransparencyLoggingPreference
	if pref != "ENABLED" && pref != "DISABLED" {
		return nil, errf(kindInvalid, "ValidationException", "1 validation error detected: Value '%s' at 'options.certificateTransparencyLoggingPreference' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED]", pref)
	}
	_, cert, err := s.acmFind(c, in.CertificateArn)
	if err != nil {
		return nil, err
	}
	cert.TransparencyLogging = pref
	return map[string]any{}, nil
}
