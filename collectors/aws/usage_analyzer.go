package aws

// Usage from IAM Access Analyzer's unused-access findings (targets.aws.usage.source:
// access_analyzer): where an account has an unused-access analyzer, its findings say
// what each role and user has not used for longer than the analyzer's age, for a few
// calls an account instead of three a principal. They list only what is unused, never
// what is used, so the attribute says so (listed: "unused", window_days: the analyzer's
// age) and the consumers conclude nothing that needs the services used (the pack's
// usage library, internal/usage's AllGranted). Groups are not analyzed: their usage is
// incomplete. Anything that cannot be read leaves the principals' usage incomplete with
// the reason: absence from the findings proves nothing unless every page was read. The
// analyzer re-evaluates daily: a service its findings still list that the principal's
// policies, as just collected, no longer grant (a fix applied since) is left out.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/accessanalyzer"
	aatypes "github.com/aws/aws-sdk-go-v2/service/accessanalyzer/types"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/snapshot"
)

// Usage sources (UsageConfig.Source).
const (
	// UsageSourceAccessAdvisor reads IAM's service-last-accessed data per principal
	// (the default).
	UsageSourceAccessAdvisor = "access_advisor"
	// UsageSourceAccessAnalyzer reads an unused-access analyzer's findings per account.
	UsageSourceAccessAnalyzer = "access_analyzer"
)

// analyzerSource is the usage attribute's source for data from Access Analyzer.
const analyzerSource = "aws.access_analyzer"

// analyzerTypes are the analyzer types whose findings are unused access, in the order
// they are looked for: an account's own analyzer first, then an organization's (found
// only in the account that holds it: the management account or the delegated
// administrator).
var analyzerTypes = []aatypes.Type{aatypes.TypeAccountUnusedAccess, aatypes.TypeOrganizationUnusedAccess}

// analyzerPermissions are the Access Analyzer actions of usage collection from it:
// ListFindingsV2 and GetFindingV2 are authorized as access-analyzer:ListFindings and
// access-analyzer:GetFinding (the API reference of each says so).
func analyzerPermissions() []string {
	return []string{"access-analyzer:ListAnalyzers", "access-analyzer:ListFindings", "access-analyzer:GetFinding"}
}

// analyzerUsage is what one account's analyzer says: the usage attribute of each role and
// user it has findings for, and what a principal without findings gets.
type analyzerUsage struct {
	err      string         // not "": nothing could be read, every principal is incomplete
	arn      string         // the analyzer's
	days     int            // its unusedAccessAge
	asOf     time.Time      // its last analysis, for a principal without findings
	byARN    map[string]any // principal ARN → its usage attribute
	complete bool           // every page of every finding was read
}

// cachedAnalyzer is one account's analyzer answer, read under its own lock so that
// accounts read in parallel do not wait for each other.
type cachedAnalyzer struct {
	mu      sync.Mutex
	fetched time.Time
	u       *analyzerUsage // nil until a complete answer was read
}

// analyzerClient is the account's Access Analyzer client in the region the analyzer is
// looked for (UsageConfig.AnalyzerRegion, else the AWS configuration's); sc, when not
// nil, counts its calls.
func (a *account) analyzerClient(sc *scope) *accessanalyzer.Client {
	region := a.c.cfg.Usage.AnalyzerRegion
	if region == "" {
		region = a.api.Region()
	}
	if region == "" {
		region = "us-east-1"
	}
	return a.api.AccessAnalyzer(region, func(o *accessanalyzer.Options) {
		if sc != nil {
			o.APIOptions = append(o.APIOptions, sc.cnt.Middleware())
		}
	})
}

// analyzerRead is the account's analyzer answer: this collector's copy while it is
// younger than the refresh period, else read again (and kept when complete). A caller
// looks every principal up in one answer: an incomplete one is not read again per
// principal.
func (a *account) analyzerRead(ctx context.Context, cl *accessanalyzer.Client) *analyzerUsage {
	refresh := a.c.cfg.Usage.Refresh
	if refresh <= 0 {
		refresh = DefaultUsageRefresh
	}
	c := &a.c.usage
	c.analyzerMu.Lock()
	e := c.analyzers[a.id]
	if e == nil {
		if c.analyzers == nil {
			c.analyzers = map[string]*cachedAnalyzer{}
		}
		e = &cachedAnalyzer{}
		c.analyzers[a.id] = e
	}
	c.analyzerMu.Unlock()
	e.mu.Lock()
	defer e.mu.Unlock() // one read per account at a time: its principals wait for it
	if e.u != nil && time.Since(e.fetched) < refresh {
		return e.u
	}
	u := readAnalyzer(ctx, cl, a.id)
	if u.complete {
		e.u, e.fetched = u, time.Now()
	}
	return u
}

// of is the usage attribute of principal r.
func (u *analyzerUsage) of(r snapshot.Resource) map[string]any {
	incomplete := func(msg string) map[string]any {
		return map[string]any{"source": analyzerSource, "listed": "unused", "complete": false, "error": msg}
	}
	switch {
	case u.err != "":
		return incomplete(u.err)
	case r.Type == "aws.iam.group":
		return incomplete("IAM Access Analyzer does not analyze groups: its unused-access findings are about roles and users")
	}
	if v, ok := u.byARN[r.UID]; ok {
		return v.(map[string]any)
	}
	// No finding: nothing is unused for longer than the analyzer's age, as of its last
	// analysis.
	return analyzerAttr(u, u.asOf, []any{}, "")
}

// analyzerAttr is a usage attribute from the analyzer u as of asOf: complete unless why
// says otherwise, and then without its services, which nobody may read in part.
func analyzerAttr(u *analyzerUsage, asOf time.Time, services []any, why string) map[string]any {
	out := map[string]any{"source": analyzerSource, "listed": "unused", "analyzer": u.arn, "window_days": u.days,
		"granularity": "action", "as_of": asOf.UTC().Format(time.RFC3339),
		"tracked_since": asOf.AddDate(0, 0, -u.days).UTC().Format(time.RFC3339),
		"complete":      why == "", "error": why}
	if why == "" {
		out["services"] = services
	}
	return out
}

// readAnalyzer reads account acct's unused-access analyzer and its active findings about
// the account's roles and users: ListAnalyzers (each type until an ACTIVE one), then
// every page of ListFindingsV2, then GetFindingV2 (every page of details) for each
// UnusedPermission finding.
func readAnalyzer(ctx context.Context, cl *accessanalyzer.Client, acct string) *analyzerUsage {
	out := &analyzerUsage{byARN: map[string]any{}}
	an, err := activeAnalyzer(ctx, cl)
	if err != nil {
		out.err = err.Error()
		return out
	}
	out.arn, out.days = aws.ToString(an.Arn), int(aws.ToInt32(an.Configuration.(*aatypes.AnalyzerConfigurationMemberUnusedAccess).Value.UnusedAccessAge))
	out.asOf = time.Now().UTC()
	if an.LastResourceAnalyzedAt != nil {
		out.asOf = an.LastResourceAnalyzedAt.UTC()
	}
	// Every active finding about the account's roles and users, every page: a principal
	// left out would read as "nothing unused", which is safe, but a page left out is an
	// error all the same (complete means every page).
	in := &accessanalyzer.ListFindingsV2Input{AnalyzerArn: an.Arn, Filter: map[string]aatypes.Criterion{
		"status":               {Eq: []string{string(aatypes.FindingStatusActive)}},
		"findingType":          {Eq: []string{string(aatypes.FindingTypeUnusedPermission)}},
		"resourceType":         {Eq: []string{string(aatypes.ResourceTypeAwsIamRole), string(aatypes.ResourceTypeAwsIamUser)}},
		"resourceOwnerAccount": {Eq: []string{acct}},
	}}
	var findings []aatypes.FindingSummaryV2
	for p := accessanalyzer.NewListFindingsV2Paginator(cl, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			out.err = "access-analyzer:ListFindingsV2: " + awsapi.Message(err)
			return out
		}
		findings = append(findings, page.Findings...)
	}
	type principal struct {
		asOf     time.Time
		services []any
		errs     []string
	}
	byARN := map[string]*principal{}
	for _, f := range findings {
		arn := aws.ToString(f.Resource)
		// The filter asked for these; an answer outside it is not trusted.
		if arn == "" || f.FindingType != aatypes.FindingTypeUnusedPermission || aws.ToString(f.ResourceOwnerAccount) != acct {
			continue
		}
		p := byARN[arn]
		if p == nil {
			p = &principal{}
			byARN[arn] = p
		}
		at := f.AnalyzedAt
		if at == nil {
			at = f.UpdatedAt
		}
		// The principal's data is as of its oldest finding: each finding speaks for the
		// age before its own analysis, and the window must be one they all cover.
		if at != nil && (p.asOf.IsZero() || at.Before(p.asOf)) {
			p.asOf = at.UTC()
		}
		if e := aws.ToString(f.Error); e != "" {
			p.errs = append(p.errs, "finding "+aws.ToString(f.Id)+": "+e)
			continue
		}
		services, err := findingServices(ctx, cl, an.Arn, f.Id)
		if err != nil {
			p.errs = append(p.errs, err.Error())
			continue
		}
		p.services = append(p.services, services...)
	}
	out.complete = true
	for arn, p := range byARN {
		asOf := p.asOf
		if asOf.IsZero() {
			p.errs = append(p.errs, "the findings carry no analysis time")
			asOf = out.asOf
		}
		if p.services == nil {
			p.services = []any{}
		}
		slices.SortFunc(p.services, func(x, y any) int {
			return strings.Compare(str(x.(map[string]any)["service"]), str(y.(map[string]any)["service"]))
		})
		out.byARN[arn] = analyzerAttr(out, asOf, p.services, strings.Join(p.errs, "; "))
		if len(p.errs) > 0 {
			out.complete = false
		}
	}
	return out
}

// activeAnalyzer is the first ACTIVE unused-access analyzer of the account (in the
// client's region), by analyzerTypes' order.
func activeAnalyzer(ctx context.Context, cl *accessanalyzer.Client) (aatypes.AnalyzerSummary, error) {
	var seen []string
	for _, typ := range analyzerTypes {
		for p := accessanalyzer.NewListAnalyzersPaginator(cl, &accessanalyzer.ListAnalyzersInput{Type: typ}); p.HasMorePages(); {
			page, err := p.NextPage(ctx)
			if err != nil {
				return aatypes.AnalyzerSummary{}, errors.New("access-analyzer:ListAnalyzers: " + awsapi.Message(err))
			}
			for _, an := range page.Analyzers {
				cfg, ok := an.Configuration.(*aatypes.AnalyzerConfigurationMemberUnusedAccess)
				if an.Status == aatypes.AnalyzerStatusActive && ok && aws.ToInt32(cfg.Value.UnusedAccessAge) > 0 {
					return an, nil
				}
				seen = append(seen, fmt.Sprintf("%s (%s, %s)", aws.ToString(an.Name), an.Type, an.Status))
			}
		}
	}
	msg := "no active unused-access analyzer: none of type ACCOUNT_UNUSED_ACCESS or ORGANIZATION_UNUSED_ACCESS is ACTIVE in " + cl.Options().Region
	if len(seen) > 0 {
		msg += "; found " + strings.Join(seen, ", ")
	}
	return aatypes.AnalyzerSummary{}, errors.New(msg)
}

// findingServices are the services of one UnusedPermission finding, every page of its
// details, in the usage attribute's shape.
func findingServices(ctx context.Context, cl *accessanalyzer.Client, analyzer, id *string) ([]any, error) {
	var out []any
	in := &accessanalyzer.GetFindingV2Input{AnalyzerArn: analyzer, Id: id}
	for {
		f, err := cl.GetFindingV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("access-analyzer:GetFindingV2 %s: %s", aws.ToString(id), awsapi.Message(err))
		}
		for _, d := range f.FindingDetails {
			if u, ok := d.(*aatypes.FindingDetailsMemberUnusedPermissionDetails); ok {
				out = append(out, unusedPermission(u.Value))
			}
		}
		if aws.ToString(f.NextToken) == "" {
			return out, nil
		}
		if in.NextToken != nil && *in.NextToken == *f.NextToken {
			return nil, fmt.Errorf("access-analyzer:GetFindingV2 %s: the same page token twice", aws.ToString(id))
		}
		in = &accessanalyzer.GetFindingV2Input{AnalyzerArn: analyzer, Id: id, NextToken: f.NextToken}
	}
}

// unusedPermission is one service of a finding: its last use (nil: none the analyzer
// knows of) and, where it tracks actions, the actions unused.
func unusedPermission(d aatypes.UnusedPermissionDetails) map[string]any {
	ns := strings.ToLower(aws.ToString(d.ServiceNamespace))
	out := map[string]any{"service": ns, "name": ns, "last_used": optTime(d.LastAccessed), "region": nil}
	if len(d.Actions) > 0 {
		actions := make([]any, 0, len(d.Actions))
		for _, a := range d.Actions {
			name := aws.ToString(a.Action)
			if !strings.Contains(name, ":") {
				name = ns + ":" + name
			}
			actions = append(actions, map[string]any{"action": name, "last_used": optTime(a.LastAccessed), "region": nil})
		}
		out["actions"] = actions
	}
	return out
}

// grantsNow are the documents of the policies of the principals of one collection: an
// analyzer's finding may predate a change (a fix that took a service away), and a service
// no policy grants any more is not reported unused.
type grantsNow struct {
	policies map[string]any   // managed policy ARN → document
	groups   map[string][]any // group name → documents of its policies
}

// newGrantsNow indexes the documents among rs.
func newGrantsNow(rs []snapshot.Resource) grantsNow {
	g := grantsNow{policies: map[string]any{}, groups: map[string][]any{}}
	for _, r := range rs {
		if r.Type == "aws.iam.policy" && r.Attributes["document"] != nil {
			g.policies[r.UID] = r.Attributes["document"]
		}
	}
	for _, r := range rs {
		if r.Type != "aws.iam.group" {
			continue
		}
		if docs, ok := g.docs(r, false); ok {
			g.groups[r.Name] = docs
		}
	}
	return g
}

// docs are the documents of r's policies (a user's groups' too, with users); ok is false
// when one of them is not known.
func (g grantsNow) docs(r snapshot.Resource, users bool) ([]any, bool) {
	var out []any
	for _, raw := range anyList(r.Attributes["attached_policies"]) {
		p, _ := raw.(map[string]any)
		d, ok := g.policies[str(p["arn"])]
		if !ok {
			return nil, false
		}
		out = append(out, d)
	}
	for _, raw := range anyList(r.Attributes["inline_policies"]) {
		p, _ := raw.(map[string]any)
		if p["document"] == nil {
			return nil, false
		}
		out = append(out, p["document"])
	}
	if users && r.Type == "aws.iam.user" {
		for _, name := range anyStrings(r.Attributes["groups"]) {
			d, ok := g.groups[name]
			if !ok {
				return nil, false
			}
			out = append(out, d...)
		}
	}
	return out, true
}

// narrow is usage u of principal r without the services r's policies no longer grant;
// u as it is when its services are not listed or a document is not known.
func (g grantsNow) narrow(r snapshot.Resource, u map[string]any) map[string]any {
	services, ok := u["services"].([]any)
	if !ok || len(services) == 0 {
		return u
	}
	docs, ok := g.docs(r, true)
	if !ok {
		return u
	}
	preds := make([]func(string) bool, 0, len(docs))
	for _, d := range docs {
		preds = append(preds, grantedServices(d))
	}
	kept := make([]any, 0, len(services))
	for _, s := range services {
		ns := str(s.(map[string]any)["service"])
		if slices.ContainsFunc(preds, func(p func(string) bool) bool { return p(ns) }) {
			kept = append(kept, s)
		}
	}
	if len(kept) == len(services) {
		return u
	}
	out := make(map[string]any, len(u))
	for k, v := range u {
		out[k] = v
	}
	out["services"] = kept
	return out
}
