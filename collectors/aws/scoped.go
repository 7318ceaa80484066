package aws

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/snapshot"
)

var _ collectors.ScopeCollector = (*Collector)(nil)

// Scopes implements collectors.ScopeCollector. Each account (with Org, the organisation's
// accounts listed again, so that a long-lived collector sees members join and leave) has
// aws/ACCT/iam and, in each region (Config.Regions, or those enabled in the account,
// listed now), aws/ACCT/ec2/REGION and aws/ACCT/acm/REGION.
//
// An account that cannot be opened (its role refused), or whose regions cannot be listed,
// has aws/ACCT/ec2 and aws/ACCT/acm instead of its regional scopes: the scopes Collect
// reports failed for it, and CollectScope too, for as long as the failure lasts. Listing
// opens every account (once: the sessions keep them) and, without Config.Regions, calls
// ec2:DescribeRegions in each; those calls belong to no scope.
func (c *Collector) Scopes(ctx context.Context) ([]snapshot.Scope, error) {
	fresh, err := c.initOnce(ctx)
	if err != nil {
		return nil, err
	}
	if !fresh {
		if err := c.refreshAccounts(ctx); err != nil {
			return nil, err
		}
	}
	var (
		mu  sync.Mutex
		out []snapshot.Scope
		g   errgroup.Group
	)
	g.SetLimit(c.cfg.Concurrency)
	for _, oa := range c.accountList() {
		g.Go(func() error {
			scopes := c.accountScopes(ctx, oa)
			mu.Lock()
			out = append(out, scopes...)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	// A listing cut short would name accounts as unopenable that were only interrupted.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b snapshot.Scope) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// accountScopes names the scopes of one account, as Collect would report them.
func (c *Collector) accountScopes(ctx context.Context, oa orgAccount) []snapshot.Scope {
	out := []snapshot.Scope{scopeOf(oa.ID, "iam", "")}
	unknown := []snapshot.Scope{out[0], scopeOf(oa.ID, "ec2", ""), scopeOf(oa.ID, "acm", "")}
	a, err := c.open(ctx, oa)
	if err != nil {
		c.log.Debug("cannot open account: its regions are unknown", "account", oa.ID, "err", err)
		return unknown
	}
	regions := c.cfg.Regions
	if len(regions) == 0 {
		if regions, err = a.listRegions(ctx, newScope(nil, a.id, "ec2", "")); err != nil {
			c.log.Debug("cannot list regions", "account", a.id, "err", awsapi.Redact(err))
			return unknown
		}
	}
	for _, r := range regions {
		out = append(out, scopeOf(a.id, "ec2", r), scopeOf(a.id, "acm", r))
	}
	return out
}

// CollectScope implements collectors.ScopeCollector: aws/ACCT/iam is the account's bulk
// IAM read (GetAccountAuthorizationDetails, the credential report…), aws/ACCT/ec2/REGION
// and aws/ACCT/acm/REGION one region's security groups or certificates, each through the
// account's session and token buckets, as Collect reads them.
//
// The account must be one of Discover's (with Org the organisation is listed again when
// it is not), and the region one of Config.Regions or, without them, of the regions last
// listed in the account (Scopes, Collect; listed now when they never were or the region
// is not among them). A scope of an account that cannot be opened is reported failed,
// whatever its region. aws/ACCT/ec2 and aws/ACCT/acm are the scopes of an account whose
// regions are unknown: reported failed while the account cannot be opened or its regions
// listed, and unknown (ErrUnknownScope) once they can, since its scopes are then the
// regional ones, which Scopes names.
func (c *Collector) CollectScope(ctx context.Context, id string, sink collectors.Sink) error {
	return c.collectScope(ctx, id, sink, func(ctx context.Context, _ *account, _ string, read readScope) error {
		return read(ctx, sink)
	})
}

// readFunc runs the read of one scope of account a (read), which reports the scope to
// the sink it is given: CollectScope runs it as it is, CollectScopeAgain around its
// replay.
type readFunc func(ctx context.Context, a *account, service string, read readScope) error

// readScope reads one scope into sink.
type readScope func(ctx context.Context, sink collectors.Sink) error

// collectScope is CollectScope, with around running the scope's read itself (the calls
// that belong to the scope: not the account's opening, nor its regions' listing).
func (c *Collector) collectScope(ctx context.Context, id string, sink collectors.Sink, around readFunc) error {
	acct, service, region, ok := parseScopeID(id)
	if !ok {
		return unknownScope(id, "not an AWS scope id (aws/ACCOUNT/iam, aws/ACCOUNT/ec2/REGION, aws/ACCOUNT/acm/REGION)")
	}
	if err := c.init(ctx); err != nil {
		return err
	}
	oa, err := c.member(ctx, id, acct)
	if err != nil {
		return err
	}
	if region != "" && len(c.cfg.Regions) > 0 && !slices.Contains(c.cfg.Regions, region) {
		return unknownScope(id, fmt.Sprintf("region %s is not one of the configured regions %v", region, c.cfg.Regions))
	}
	a, err := c.open(ctx, oa)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.log.Warn("cannot open account", "account", acct, "err", err)
		return openFailed(sink, acct, service, region, err).finish()
	}
	switch {
	case service == "iam":
		err = around(ctx, a, service, a.collectIAM)
	case region == "":
		err = a.collectRegionless(ctx, id, service, sink)
	default:
		var known bool
		known, err = a.regionEnabled(ctx, id, service, region, sink)
		switch {
		case known && service == "ec2":
			err = around(ctx, a, service, func(ctx context.Context, sink collectors.Sink) error { return a.collectEC2(ctx, sink, region) })
		case known:
			err = around(ctx, a, service, func(ctx context.Context, sink collectors.Sink) error { return a.collectACM(ctx, sink, region) })
		}
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// parseScopeID reads "aws/ACCOUNT/iam", "aws/ACCOUNT/ec2[/REGION]" or
// "aws/ACCOUNT/acm[/REGION]".
func parseScopeID(id string) (acct, service, region string, ok bool) {
	f := strings.Split(id, "/")
	if len(f) < 3 || len(f) > 4 || f[0] != "aws" || slices.Contains(f, "") {
		return "", "", "", false
	}
	acct, service = f[1], f[2]
	if len(f) == 4 {
		region = f[3]
	}
	switch service {
	case "iam":
		return acct, service, "", region == ""
	case "ec2", "acm":
		return acct, service, region, true
	}
	return "", "", "", false
}

func unknownScope(id, why string) error {
	return fmt.Errorf("aws: collect scope %s: %s: %w", id, why, collectors.ErrUnknownScope)
}

// member is the account acct among those to collect; with Org, an account not among
// them is looked for again in the organisation (one that joined since discovery).
func (c *Collector) member(ctx context.Context, id, acct string) (orgAccount, error) {
	find := func() (orgAccount, bool) {
		accounts := c.accountList()
		i := slices.IndexFunc(accounts, func(oa orgAccount) bool { return oa.ID == acct })
		if i < 0 {
			return orgAccount{}, false
		}
		return accounts[i], true
	}
	if oa, ok := find(); ok {
		return oa, nil
	}
	if c.cfg.Org {
		if err := c.refreshAccounts(ctx); err != nil {
			return orgAccount{}, fmt.Errorf("aws: collect scope %s: %w", id, err)
		}
		if oa, ok := find(); ok {
			return oa, nil
		}
	}
	return orgAccount{}, unknownScope(id, "account "+acct+" is not one of the accounts collected")
}

// regionEnabled reports whether region is enabled in the account, from the regions last
// listed there or, when they never were or lack it, from a listing now (which belongs to
// no scope, like Collect's). When they cannot be listed the scope is reported failed, as
// Collect reports an account's scopes whose regions it cannot list, and known is false.
func (a *account) regionEnabled(ctx context.Context, id, service, region string, sink collectors.Sink) (known bool, err error) {
	if len(a.c.cfg.Regions) > 0 {
		return true, nil // checked against them already
	}
	if regions, ok := a.c.knownRegions(a.id); ok && slices.Contains(regions, region) {
		return true, nil
	}
	listed := newScope(nil, a.id, "ec2", "")
	regions, err := a.listRegions(ctx, listed)
	if err != nil {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		a.c.log.Warn("cannot list regions", "account", a.id, "err", awsapi.Redact(err))
		return false, regionsFailed(sink, a.id, service, region, listed, err).finish()
	}
	if !slices.Contains(regions, region) {
		return false, unknownScope(id, fmt.Sprintf("region %s is not enabled in account %s", region, a.id))
	}
	return true, nil
}

// collectRegionless reads aws/ACCOUNT/ec2 or aws/ACCOUNT/acm, the scope of an opened
// account whose regions are unknown: failed while they cannot be listed, and no scope at
// all once they can.
func (a *account) collectRegionless(ctx context.Context, id, service string, sink collectors.Sink) error {
	if len(a.c.cfg.Regions) > 0 {
		return unknownScope(id, fmt.Sprintf("account %s opens and its regions are configured: its scopes are %s/REGION", a.id, id))
	}
	listed := newScope(nil, a.id, "ec2", "")
	regions, err := a.listRegions(ctx, listed)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.c.log.Warn("cannot list regions", "account", a.id, "err", awsapi.Redact(err))
		return regionsFailed(sink, a.id, service, "", listed, err).finish()
	}
	return unknownScope(id, fmt.Sprintf("the regions of account %s are listed now (%d): its scopes are %s/REGION", a.id, len(regions), id))
}
