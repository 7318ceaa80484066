package aws

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/organizations"
	orgtypes "github.com/aws/aws-sdk-go-v2/service/organizations/types"

	"github.com/warden-sec/warden/collectors"
)

// listOrgAccounts lists the organisation's active accounts. Suspended accounts cannot be
// assumed into and hold nothing to fix.
func listOrgAccounts(ctx context.Context, a *account, sc *scope) ([]orgAccount, error) {
	var out []orgAccount
	p := organizations.NewListAccountsPaginator(a.org(sc), &organizations.ListAccountsInput{})
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

// assumeRole returns cached credentials of roleARN, checked once now so that an account
// that cannot be assumed fails here, as one account, and not in every call.
func assumeRole(ctx context.Context, c *Collector, roleARN string) (aws.CredentialsProvider, error) {
	// The assumptions are the caller's STS calls: paced by the caller's STS bucket.
	prov := stscreds.NewAssumeRoleProvider(c.self.sts(&scope{}), roleARN, func(o *stscreds.AssumeRoleOptions) {
		o.RoleSessionName = "warden-collect"
	})
	cache := aws.NewCredentialsCache(prov)
	if _, err := cache.Retrieve(ctx); err != nil {
		return nil, err
	}
	return cache, nil
}

// enabledRegions lists the regions enabled in the account. When that fails, the
// account's EC2 and ACM scopes are recorded failed: their regions are unknown.
func (a *account) enabledRegions(ctx context.Context, sink collectors.Sink) ([]string, error) {
	sc := newScope(sink, a.id, "ec2", "")
	out, err := a.ec2(sc, a.cfg.Region).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil {
		for _, svc := range []string{"ec2", "acm"} {
			s := newScope(sink, a.id, svc, "")
			s.fail("ec2:DescribeRegions", err)
			// The attempts were EC2's: counted once, in the ec2 scope, so that a summary
			// over the scopes does not count one denied call twice.
			if svc == "ec2" {
				s.calls.Store(sc.calls.Load())
				s.denied.Store(sc.denied.Load())
				s.throttled.Store(sc.throttled.Load())
			}
			if ferr := s.finish(); ferr != nil {
				return nil, ferr
			}
		}
		return nil, fmt.Errorf("list regions of %s: %w", a.id, redacted{err})
	}
	regions := make([]string, 0, len(out.Regions))
	for _, r := range out.Regions {
		regions = append(regions, aws.ToString(r.RegionName))
	}
	return regions, nil
}
