package aws

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/awsapi"
)

// listOrgAccounts lists the organisation's active accounts. Suspended accounts cannot be
// assumed into and hold nothing to fix.
func listOrgAccounts(ctx context.Context, cl *organizations.Client) ([]orgAccount, error) {
	var out []orgAccount
	p := organizations.NewListAccountsPaginator(cl, &organizations.ListAccountsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, acct := range page.Accounts {
			if acct.Status == orgtypes.AccountStatusActive || acct.State == orgtypes.AccountStateActive {
				out = append(out, orgAccount{ID: aws.ToString(acct.Id), Name: aws.ToString(acct.Name)})
			}
		}
	}
	return out, nil
}

// enabledRegions lists the regions enabled in the account. When that fails, the
// account's EC2 and ACM scopes are recorded failed (their regions are unknown), the
// failure is logged, and no region is returned. The error is only a sink's that failed.
func (a *account) enabledRegions(ctx context.Context, sink collectors.Sink) ([]string, error) {
	sc := newScope(sink, a.id, "ec2", "")
	out, err := a.ec2(sc, a.api.Region()).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil {
		a.c.log.Warn("cannot list regions", "account", a.id, "err", awsapi.Redact(err))
		for _, svc := range []string{"ec2", "acm"} {
			s := newScope(sink, a.id, svc, "")
			s.fail("ec2:DescribeRegions", err)
			// The attempts were EC2's: counted once, in the ec2 scope, so that a summary
			// over the scopes does not count one denied call twice.
			if svc == "ec2" {
				s.cnt.Add(&sc.cnt)
			}
			if ferr := s.finish(); ferr != nil {
				return nil, ferr
			}
		}
		return nil, nil
	}
	regions := make([]string, 0, len(out.Regions))
	for _, r := range out.Regions {
		regions = append(regions, aws.ToString(r.RegionName))
	}
	return regions, nil
}
