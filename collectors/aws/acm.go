package aws

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/acm"
	acmtypes "github.com/aws/aws-sdk-go-v2/service/acm/types"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/collectors/certinfo"
	"github.com/warden-sec/warden/snapshot"
)

// collectACM reads the ACM certificates of one region: the list (of every key type —
// ACM lists only RSA 2048 by default), then each certificate's description, tags and body.
func (a *account) collectACM(ctx context.Context, sink collectors.Sink, region string) error {
	sc := newScope(sink, a.id, "acm", region)
	a.readACM(ctx, sc, region)
	return a.done(sc)
}

func (a *account) readACM(ctx context.Context, sc *scope, region string) {
	cl := a.acm(sc, region)
	var arns []string
	p := acm.NewListCertificatesPaginator(cl, &acm.ListCertificatesInput{
		Includes: &acmtypes.Filters{KeyTypes: acmtypes.KeyAlgorithm("").Values()},
		MaxItems: aws.Int32(1000),
	})
	for page, err := range pages(ctx, p) {
		if err != nil {
			sc.fail("acm:ListCertificates", err)
			return
		}
		for _, s := range page.CertificateSummaryList {
			arns = append(arns, aws.ToString(s.CertificateArn))
		}
	}
	for _, arn := range arns {
		r, errs, err := certificate(ctx, cl, region, arn)
		if err != nil {
			sc.partial(err.op, err.err)
			continue
		}
		for _, e := range errs {
			sc.partial(e.op, e.err)
		}
		sc.add(r)
	}
}

// opError is a failed read and the operation that failed.
type opError struct {
	op  string
	err error
}

func (e *opError) Error() string { return e.op + ": " + e.err.Error() }
func (e *opError) Unwrap() error { return e.err }

// certificate reads one ACM certificate: its description (without which there is no
// resource: err), then its body and tags (without which the resource lacks them: errs).
func certificate(ctx context.Context, cl *acm.Client, region, arn string) (snapshot.Resource, []*opError, *opError) {
	d, err := cl.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(arn)})
	if err == nil && d.Certificate == nil {
		err = errors.New("the answer holds no Certificate")
	}
	if err != nil {
		return snapshot.Resource{}, nil, &opError{"acm:DescribeCertificate " + arn, err}
	}
	var errs []*opError
	c := d.Certificate
	attrs := map[string]any{
		"domain_name": aws.ToString(c.DomainName), "subject_alternative_names": strs(c.SubjectAlternativeNames),
		"status": string(c.Status), "cert_type": string(c.Type), "in_use_by": strs(c.InUseBy),
		"renewal_eligibility": string(c.RenewalEligibility), "renewal_status": "", "renewal_failure_reason": "",
	}
	if c.Options != nil && c.Options.CertificateTransparencyLoggingPreference != "" {
		attrs["transparency_logging"] = string(c.Options.CertificateTransparencyLoggingPreference)
	}
	if c.RenewalSummary != nil {
		attrs["renewal_status"] = string(c.RenewalSummary.RenewalStatus)
		attrs["renewal_failure_reason"] = string(c.RenewalSummary.RenewalStatusReason)
	}
	if c.Status == acmtypes.CertificateStatusIssued || c.Status == acmtypes.CertificateStatusExpired || c.Type == acmtypes.CertificateTypeImported {
		got, err := cl.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(arn)})
		if err != nil {
			errs = append(errs, &opError{"acm:GetCertificate " + arn, err})
		} else if cert, err := certinfo.ParsePEM(aws.ToString(got.Certificate)); err != nil {
			errs = append(errs, &opError{"parse certificate " + arn, err})
		} else {
			attrs["certificate"] = cert
		}
	}
	var t map[string]string
	if tl, err := cl.ListTagsForCertificate(ctx, &acm.ListTagsForCertificateInput{CertificateArn: aws.String(arn)}); err != nil {
		errs = append(errs, &opError{"acm:ListTagsForCertificate " + arn, err})
	} else if len(tl.Tags) > 0 {
		t = map[string]string{}
		for _, tag := range tl.Tags {
			t[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
		}
	}
	return snapshot.Resource{UID: arn, Type: "aws.acm.certificate", Name: aws.ToString(c.DomainName), Region: region, Tags: t, Attributes: attrs}, errs, nil
}

// acmPermissions are the IAM actions of this file's reads.
func acmPermissions() []string {
	return []string{"acm:DescribeCertificate", "acm:GetCertificate", "acm:ListCertificates", "acm:ListTagsForCertificate"}
}
