package cloudsim

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	acmtypes "github.com/aws/aws-sdk-go-v2/service/acm/types"
)

const acmTestARN = "arn:aws:acm:us-east-1:111111111111:certificate/"

// acmTestNow is the simulator's clock in the ACM tests: inside the minted certificates'
// default validity (2026).
var acmTestNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func acmTestWorld() *World {
	notAfter := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	return &World{AWS: AWS{Accounts: []*Account{{
		ID: "111111111111", Regions: []string{"us-east-1", "eu-west-1"},
		Certificates: []*Certificate{
			{ID: "shop", Region: "us-east-1", Domain: "shop.acme.example", InUseBy: []string{"arn:aws:elasticloadbalancing:us-east-1:111111111111:loadbalancer/app/shop/1"},
				RenewalStatus: "PENDING_AUTO_RENEWAL",
				Cert: CertSpec{Subject: "CN=shop.acme.example", Issuer: "CN=Amazon RSA 2048 M02,O=Amazon,C=US", DNSNames: []string{"shop.acme.example", "www.acme.example"},
					NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: notAfter, Serial: "0a1b2c"}},
			{ID: "grpc", Region: "us-east-1", Domain: "grpc.acme.example", Type: "IMPORTED",
				Cert: CertSpec{Subject: "CN=grpc.acme.example,O=Acme Corp", Issuer: "CN=Acme Issuing,O=Acme Corp", KeyAlgorithm: "EC", KeySize: 256, DNSNames: []string{"grpc.acme.example"}}},
			{ID: "pending", Region: "us-east-1", Domain: "new.acme.example", Status: "PENDING_VALIDATION"},
			{ID: "eu", Region: "eu-west-1", Domain: "eu.acme.example", Cert: CertSpec{Subject: "CN=eu.acme.example"}},
		},
	}}}}
}

func acmIDs(list []acmtypes.CertificateSummary) []string {
	var ids []string
	for _, c := range list {
		ids = append(ids, strings.TrimPrefix(aws.ToString(c.CertificateArn), acmTestARN))
	}
	return ids
}

func TestACMListCertificates(t *testing.T) {
	_, cfg := sdkSim(t, acmTestWorld(), Options{Now: func() time.Time { return acmTestNow }})
	client := acm.NewFromConfig(cfg)
	ctx := context.Background()
	allKeys := &acmtypes.Filters{KeyTypes: acmtypes.KeyAlgorithm("").Values()}
	tests := []struct {
		name string
		in   acm.ListCertificatesInput
		want []string
	}{
		{"default lists RSA_2048 only", acm.ListCertificatesInput{}, []string{"shop", "pending"}},
		{"every key type", acm.ListCertificatesInput{Includes: allKeys}, []string{"shop", "grpc", "pending"}},
		{"EC only", acm.ListCertificatesInput{Includes: &acmtypes.Filters{KeyTypes: []acmtypes.KeyAlgorithm{acmtypes.KeyAlgorithmEcPrime256v1}}}, []string{"grpc"}},
		{"issued", acm.ListCertificatesInput{Includes: allKeys, CertificateStatuses: []acmtypes.CertificateStatus{acmtypes.CertificateStatusIssued}}, []string{"shop", "grpc"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			p := acm.NewListCertificatesPaginator(client, &tc.in, func(o *acm.ListCertificatesPaginatorOptions) { o.Limit = 1 })
			pages := 0
			for p.HasMorePages() {
				page, err := p.NextPage(ctx)
				if err != nil {
					t.Fatal(err)
				}
				pages++
				ids = append(ids, acmIDs(page.CertificateSummaryList)...)
			}
			if !slices.Equal(ids, tc.want) || pages != len(tc.want) {
				t.Errorf("got %v in %d pages, want %v", ids, pages, tc.want)
			}
		})
	}
	out, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{})
	if err != nil {
		t.Fatal(err)
	}
	s := out.CertificateSummaryList[0]
	if s.KeyAlgorithm != acmtypes.KeyAlgorithmRsa2048 || !aws.ToBool(s.InUse) || s.Type != acmtypes.CertificateTypeAmazonIssued ||
		!slices.Equal(s.SubjectAlternativeNameSummaries, []string{"shop.acme.example", "www.acme.example"}) ||
		!aws.ToTime(s.NotAfter).Equal(time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("summary %+v", s)
	}
	eu, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{}, func(o *acm.Options) { o.Region = "eu-west-1" })
	if err != nil || !slices.Equal(acmIDs(eu.CertificateSummaryList), []string{"arn:aws:acm:eu-west-1:111111111111:certificate/eu"}) {
		t.Errorf("eu-west-1: %v %v", err, acmIDs(eu.CertificateSummaryList))
	}
	if _, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{NextToken: aws.String("nope")}); sdkErrCode(err) != "InvalidArgsException" {
		t.Errorf("bad token: %v", err)
	}
}

func TestACMDescribeAndGet(t *testing.T) {
	_, cfg := sdkSim(t, acmTestWorld(), Options{Now: func() time.Time { return acmTestNow }})
	client := acm.NewFromConfig(cfg)
	ctx := context.Background()

	out, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(acmTestARN + "shop")})
	if err != nil {
		t.Fatal(err)
	}
	d := out.Certificate
	checks := []struct {
		field     string
		got, want any
	}{
		{"DomainName", aws.ToString(d.DomainName), "shop.acme.example"},
		{"SANs", strings.Join(d.SubjectAlternativeNames, ","), "shop.acme.example,www.acme.example"},
		{"Status", d.Status, acmtypes.CertificateStatusIssued},
		{"Type", d.Type, acmtypes.CertificateTypeAmazonIssued},
		{"KeyAlgorithm", d.KeyAlgorithm, acmtypes.KeyAlgorithmRsa2048},
		{"SignatureAlgorithm", aws.ToString(d.SignatureAlgorithm), "SHA256WITHRSA"},
		{"Serial", aws.ToString(d.Serial), "0a:1b:2c"},
		{"Subject", aws.ToString(d.Subject), "CN=shop.acme.example"},
		{"Issuer", aws.ToString(d.Issuer), "Amazon"},
		{"NotBefore", aws.ToTime(d.NotBefore), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"NotAfter", aws.ToTime(d.NotAfter), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)},
		{"InUseBy", len(d.InUseBy), 1},
		{"RenewalEligibility", d.RenewalEligibility, acmtypes.RenewalEligibilityEligible},
		{"RenewalStatus", d.RenewalSummary.RenewalStatus, acmtypes.RenewalStatusPendingAutoRenewal},
		{"ExtendedKeyUsage", d.ExtendedKeyUsages[0].Name, acmtypes.ExtendedKeyUsageNameTlsWebServerAuthentication},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
		}
	}
	ec, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(acmTestARN + "grpc")})
	if err != nil {
		t.Fatal(err)
	}
	if ec.Certificate.KeyAlgorithm != acmtypes.KeyAlgorithmEcPrime256v1 || aws.ToString(ec.Certificate.Issuer) != "Acme Corp" ||
		ec.Certificate.ImportedAt == nil || ec.Certificate.RenewalEligibility != acmtypes.RenewalEligibilityIneligible {
		t.Errorf("imported: %+v", ec.Certificate)
	}

	got, err := client.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(acmTestARN + "shop")})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode([]byte(aws.ToString(got.Certificate)))
	if x, err := x509.ParseCertificate(b.Bytes); err != nil || x.Subject.CommonName != "shop.acme.example" || !strings.Contains(aws.ToString(got.CertificateChain), "BEGIN CERTIFICATE") {
		t.Errorf("GetCertificate: %v", err)
	}

	errs := []struct {
		name string
		call func() error
		code string
	}{
		{"unknown", func() error {
			_, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(acmTestARN + "nope")})
			return err
		}, "ResourceNotFoundException"},
		{"other region", func() error {
			_, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String("arn:aws:acm:eu-west-1:111111111111:certificate/eu")})
			return err
		}, "ResourceNotFoundException"},
		{"malformed arn", func() error {
			_, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String("arn:aws:acm:us-east-1:111111111111:certificate-shop")})
			return err
		}, "InvalidArnException"},
		{"pending has no body", func() error {
			_, err := client.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(acmTestARN + "pending")})
			return err
		}, "RequestInProgressException"},
		{"delete in use", func() error {
			_, err := client.DeleteCertificate(ctx, &acm.DeleteCertificateInput{CertificateArn: aws.String(acmTestARN + "shop")})
			return err
		}, "ResourceInUseException"},
		{"renew imported", func() error {
			_, err := client.RenewCertificate(ctx, &acm.RenewCertificateInput{CertificateArn: aws.String(acmTestARN + "grpc")})
			return err
		}, "ValidationException"},
	}
	for _, tc := range errs {
		t.Run(tc.name, func(t *testing.T) {
			if got := sdkErrCode(tc.call()); got != tc.code {
				t.Errorf("error code %q, want %q", got, tc.code)
			}
		})
	}
}

// acmMint mints a certificate with the package's minter and returns it with its key.
func acmMint(t *testing.T, m *minter, spec CertSpec) (certPEM, keyPEM []byte) {
	t.Helper()
	if err := m.fill(&spec); err != nil {
		t.Fatal(err)
	}
	x, err := acmParsePEM(spec.PEM)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range m.keys {
		if k.Public().(interface{ Equal(crypto.PublicKey) bool }).Equal(x.PublicKey) {
			der, err := x509.MarshalPKCS8PrivateKey(k)
			if err != nil {
				t.Fatal(err)
			}
			return []byte(spec.PEM), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		}
	}
	t.Fatal("minted key not found")
	return nil, nil
}

func TestACMImportLifecycle(t *testing.T) {
	_, cfg := sdkSim(t, acmTestWorld(), Options{Now: func() time.Time { return acmTestNow }})
	client := acm.NewFromConfig(cfg)
	ctx := context.Background()
	m := newMinter()
	certPEM, keyPEM := acmMint(t, m, CertSpec{Subject: "CN=api.acme.example", Issuer: "CN=R11,O=Let's Encrypt,C=US",
		KeyAlgorithm: "EC", KeySize: 384, DNSNames: []string{"api.acme.example", "api2.acme.example"},
		NotAfter: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)})

	imp, err := client.ImportCertificate(ctx, &acm.ImportCertificateInput{Certificate: certPEM, PrivateKey: keyPEM,
		Tags: []acmtypes.Tag{{Key: aws.String("owner"), Value: aws.String("sec")}}})
	if err != nil {
		t.Fatal(err)
	}
	arn := aws.ToString(imp.CertificateArn)
	if !strings.HasPrefix(arn, acmTestARN) {
		t.Fatalf("arn %q", arn)
	}
	d, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: &arn})
	if err != nil {
		t.Fatal(err)
	}
	c := d.Certificate
	if c.Type != acmtypes.CertificateTypeImported || c.KeyAlgorithm != acmtypes.KeyAlgorithmEcSecp384r1 || aws.ToString(c.DomainName) != "api.acme.example" ||
		len(c.SubjectAlternativeNames) != 2 || aws.ToString(c.Issuer) != "Let's Encrypt" || aws.ToString(c.SignatureAlgorithm) != "SHA256WITHECDSA" ||
		!aws.ToTime(c.NotAfter).Equal(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)) || !aws.ToTime(c.ImportedAt).Equal(acmTestNow) || c.Status != acmtypes.CertificateStatusIssued {
		t.Errorf("imported %+v", c)
	}
	tags, err := client.ListTagsForCertificate(ctx, &acm.ListTagsForCertificateInput{CertificateArn: &arn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Value) != "sec" {
		t.Errorf("tags %v %+v", err, tags)
	}

	// Reimport a renewed certificate under the same ARN.
	renewedPEM, renewedKey := acmMint(t, m, CertSpec{Subject: "CN=api.acme.example", KeyAlgorithm: "EC", KeySize: 256,
		NotAfter: time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)})
	if _, err := client.ImportCertificate(ctx, &acm.ImportCertificateInput{CertificateArn: &arn, Certificate: renewedPEM, PrivateKey: renewedKey}); err != nil {
		t.Fatal(err)
	}
	d, err = client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: &arn})
	if err != nil || !aws.ToTime(d.Certificate.NotAfter).Equal(time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)) || d.Certificate.KeyAlgorithm != acmtypes.KeyAlgorithmEcPrime256v1 {
		t.Errorf("reimported: %v %+v", err, d)
	}

	expiredPEM, expiredKey := acmMint(t, m, CertSpec{Subject: "CN=old.acme.example", KeyAlgorithm: "EC", KeySize: 256,
		NotBefore: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)})
	bad := []struct {
		name string
		in   acm.ImportCertificateInput
		code string
	}{
		{"garbage", acm.ImportCertificateInput{Certificate: []byte("not a certificate"), PrivateKey: keyPEM}, "ValidationException"},
		{"key not PEM", acm.ImportCertificateInput{Certificate: certPEM, PrivateKey: []byte("not a key")}, "ValidationException"},
		{"wrong key", acm.ImportCertificateInput{Certificate: certPEM, PrivateKey: renewedKey}, "ValidationException"},
		{"expired", acm.ImportCertificateInput{Certificate: expiredPEM, PrivateKey: expiredKey}, "ValidationException"},
		{"reimport over ACM's", acm.ImportCertificateInput{CertificateArn: aws.String(acmTestARN + "shop"), Certificate: certPEM, PrivateKey: keyPEM}, "ValidationException"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := client.ImportCertificate(ctx, &tc.in); sdkErrCode(err) != tc.code {
				t.Errorf("got %v, want %s", err, tc.code)
			}
		})
	}

	if _, err := client.DeleteCertificate(ctx, &acm.DeleteCertificateInput{CertificateArn: &arn}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: &arn}); sdkErrCode(err) != "ResourceNotFoundException" {
		t.Errorf("deleted: %v", err)
	}

	// Renewing an ACM-issued certificate replaces its body with a later one.
	shop := aws.String(acmTestARN + "shop")
	if _, err := client.RenewCertificate(ctx, &acm.RenewCertificateInput{CertificateArn: shop}); err != nil {
		t.Fatal(err)
	}
	d, err = client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: shop})
	if err != nil || !aws.ToTime(d.Certificate.NotAfter).After(time.Date(2027, 6, 1, 0, 0, 0, 0, time.UTC)) ||
		d.Certificate.RenewalSummary.RenewalStatus != acmtypes.RenewalStatusSuccess || aws.ToString(d.Certificate.DomainName) != "shop.acme.example" {
		t.Errorf("renewed: %v %+v", err, d)
	}
}

func TestACMFaults(t *testing.T) {
	sim, cfg := sdkSim(t, acmTestWorld(), Options{Now: func() time.Time { return acmTestNow }})
	ctx := context.Background()
	if err := sim.SetFaults([]Fault{{Service: "acm", Region: "eu-west-1", AccessDenied: true}, {Service: "acm", Action: "Describe*", ThrottleRate: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	client := acm.NewFromConfig(cfg, func(o *acm.Options) { o.RetryMaxAttempts = 1 })
	if _, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{}, func(o *acm.Options) { o.Region = "eu-west-1" }); sdkErrCode(err) != "AccessDeniedException" {
		t.Errorf("eu-west-1: %v", err)
	}
	if _, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{}); err != nil {
		t.Errorf("us-east-1: %v", err)
	}
	if _, err := client.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(acmTestARN + "shop")}); sdkErrCode(err) != "ThrottlingException" {
		t.Errorf("throttled: %v", err)
	}
	if _, err := client.ListCertificates(ctx, &acm.ListCertificatesInput{}, func(o *acm.Options) { o.Region = "ap-south-2" }); sdkErrCode(err) != "UnrecognizedClientException" {
		t.Errorf("disabled region: %v", err)
	}
}
