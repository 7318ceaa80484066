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
	for page, err := range pages(ctx, organizations.NewListAccountsPaginator(cl, &organizations.ListAccountsInput{})) {
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
	listed := newScope(sink, a.id, "ec2", "")
	regions, err := a.listRegions(ctx, listed)
	if err != nil {
		a.c.log.Warn("cannot list regions", "account", a.id, "err", awsapi.Redact(err))
		for _, svc := range []string{"ec2", "acm"} {
			if ferr := regionsFailed(sink, a.id, svc, "", listed, err).finish(); ferr != nil {
				return nil, ferr
			}
		}
		return nil, nil
	}
	return regions, nil
}

// listRegions lists the regions enabled in the account, its attempts counted in listed,
// and remembers them for CollectScope.
func (a *account) listRegions(ctx context.Context, listed *scope) ([]string, error) {
	out, err := a.ec2(listed, a.api.Region()).DescribeRegions(ctx, &ec2.DescribeRegionsInput{})
	if err != nil {
		return nil, err
	}
	regions := make([]string, 0, len(out.Regions))
	for _, r := range out.Regions {
		regions = append(regions, aws.ToString(r.RegionName))
	}
	a.c.mu.Lock()
	defer a.c.mu.Unlock()
	if a.c.regions == nil {
		a.c.regions = map[string][]string{}
	}
	a.c.regions[a.id] = regions
	return regions, nil
}

// knownRegions are the regions last listed in an account; ok is false when they never were.
func (c *Collector) knownRegions(acct string) (regions []string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	regions, ok = c.regions[acct]
	return regions, ok
}

// regionsFailed is scope service/region of an account whose regions could not be listed
// (err), failed. The attempts of the listing (listed) were EC2's: they are counted once,
// in the ec2 scope, so that a summary over the scopes does not count one denied call twice.
func regionsFailed(sink collectors.Sink, acct, service, region string, listed *scope, err error) *scope {
	sc := newScope(sink, acct, service, region)
	sc.fail("ec2:DescribeRegions", err)
	if service == "ec2" {
		sc.cnt.Add(&listed.cnt)
	}
	return sc
}

// regionPermissions are the IAM actions of the reads in every account this file makes:
// the enabled regions.
func regionPermissions() []string { return []string{"ec2:DescribeRegions"} }

// OrgPermissions are the IAM actions warden needs, beyond Permissions, in the account it
// runs in to walk an organisation (Config.Org): list the member accounts, and assume
// the organisation role in each (the role's ARN is the resource to grant it on). A fresh
// slice, sorted.
func OrgPermissions() []string { return []string{"organizations:ListAccounts", "sts:AssumeRole"} }
