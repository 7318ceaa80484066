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
func (a *account) collectACM(ctx context.Context, sink collectors.Sink, region string) {
	sc := newScope(sink, a.id, "acm", region)
	defer a.done(sc)
	cl := a.acm(sc, region)
	var arns []string
	p := acm.NewListCertificatesPaginator(cl, &acm.ListCertificatesInput{
		Includes: &acmtypes.Filters{KeyTypes: acmtypes.KeyAlgorithm("").Values()},
		MaxItems: aws.Int32(1000),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			sc.fail("acm:ListCertificates", err)
			return
		}
		for _, s := range page.CertificateSummaryList {
			arns = append(arns, aws.ToString(s.CertificateArn))
		}
	}
	for _, arn := range arns {
		d, err := cl.DescribeCertificate(ctx, &acm.DescribeCertificateInput{CertificateArn: aws.String(arn)})
		if err == nil && d.Certificate == nil {
			err = errors.New("the answer holds no Certificate")
		}
		if err != nil {
			sc.partial("acm:DescribeCertificate "+arn, err)
			continue
		}
		c := d.Certificate
		attrs := map[string]any{
			"domain_name": aws.ToString(c.DomainName), "subject_alternative_names": strs(c.SubjectAlternativeNames),
			"status": string(c.Status), "cert_type": string(c.Type), "in_use_by": strs(c.InUseBy),
			"renewal_eligibility": string(c.RenewalEligibility), "renewal_status": "", "renewal_failure_reason": "",
		}
		if c.RenewalSummary != nil {
			attrs["renewal_status"] = string(c.RenewalSummary.RenewalStatus)
			attrs["renewal_failure_reason"] = string(c.RenewalSummary.RenewalStatusReason)
		}
		if c.Status == acmtypes.CertificateStatusIssued || c.Status == acmtypes.CertificateStatusExpired || c.Type == acmtypes.CertificateTypeImported {
			got, err := cl.GetCertificate(ctx, &acm.GetCertificateInput{CertificateArn: aws.String(arn)})
			if err != nil {
				sc.partial("acm:GetCertificate "+arn, err)
			} else if cert, err := certinfo.ParsePEM(aws.ToString(got.Certificate)); err != nil {
				sc.partial("parse certificate "+arn, err)
			} else {
				attrs["certificate"] = cert
			}
		}
		var t map[string]string
		if tl, err := cl.ListTagsForCertificate(ctx, &acm.ListTagsForCertificateInput{CertificateArn: aws.String(arn)}); err != nil {
			sc.partial("acm:ListTagsForCertificate "+arn, err)
		} else if len(tl.Tags) > 0 {
			t = map[string]string{}
			for _, tag := range tl.Tags {
				t[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
			}
		}
		sc.add(snapshot.Resource{UID: arn, Type: "aws.acm.certificate", Name: aws.ToString(c.DomainName), Region: region, Tags: t, Attributes: attrs})
	}
}
