package cloudsim

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/accessanalyzer"
	aatypes "github.com/aws/aws-sdk-go-v2/service/accessanalyzer/types"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/iam/types"
)

// analyzerSim is the Access Advisor world with an unused-access analyzer of age days in
// its account.
func analyzerSim(t *testing.T, days int) aws.Config {
	t.Helper()
	w, err := ParseWorld([]byte(advisorWorld))
	if err != nil {
		t.Fatal(err)
	}
	w.AWS.Accounts[0].AccessAnalyzer = &AccessAnalyzer{UnusedAccessAge: days}
	_, srv := startSim(t, w, Options{Now: func() time.Time { return advisorNow }})
	return iamTestConfig(srv, "AKIDROOT")
}

// The official client lists the analyzer (in its region, by type), and its findings agree
// with Access Advisor's report of the same principal: each granted service unused for
// more than the age, and in the services used since, the tracked actions unused that
// long. Both lists and the findings' details are paginated.
func TestAccessAnalyzer_findingsAgreeWithAccessAdvisor(t *testing.T) {
	ctx := context.Background()
	const days = 90
	cfg := analyzerSim(t, days)
	aa := accessanalyzer.NewFromConfig(cfg)

	got, err := aa.ListAnalyzers(ctx, &accessanalyzer.ListAnalyzersInput{Type: aatypes.TypeAccountUnusedAccess})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Analyzers) != 1 {
		t.Fatalf("analyzers %+v, want one", got.Analyzers)
	}
	an := got.Analyzers[0]
	conf, ok := an.Configuration.(*aatypes.AnalyzerConfigurationMemberUnusedAccess)
	if an.Status != aatypes.AnalyzerStatusActive || !ok || aws.ToInt32(conf.Value.UnusedAccessAge) != days ||
		aws.ToString(an.Arn) != "arn:aws:access-analyzer:us-east-1:111111111111:analyzer/unused-access" {
		t.Fatalf("analyzer %+v", an)
	}
	if org, err := aa.ListAnalyzers(ctx, &accessanalyzer.ListAnalyzersInput{Type: aatypes.TypeOrganizationUnusedAccess}); err != nil || len(org.Analyzers) != 0 {
		t.Errorf("organization analyzers %+v %v, want none", org, err)
	}
	other := accessanalyzer.NewFromConfig(cfg, func(o *accessanalyzer.Options) { o.Region = "eu-west-1" })
	if out, err := other.ListAnalyzers(ctx, &accessanalyzer.ListAnalyzersInput{}); err != nil || len(out.Analyzers) != 0 {
		t.Errorf("analyzers in eu-west-1 %+v %v, want none: analyzers are regional", out, err)
	}

	var findings []aatypes.FindingSummaryV2
	p := accessanalyzer.NewListFindingsV2Paginator(aa, &accessanalyzer.ListFindingsV2Input{AnalyzerArn: an.Arn, MaxResults: aws.Int32(1),
		Filter: map[string]aatypes.Criterion{"status": {Eq: []string{"ACTIVE"}}, "resourceType": {Eq: []string{"AWS::IAM::Role", "AWS::IAM::User"}}}})
	pages := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		findings = append(findings, page.Findings...)
	}
	if pages != len(findings) || len(findings) == 0 {
		t.Fatalf("%d findings in %d pages of one", len(findings), pages)
	}
	iamc := iam.NewFromConfig(cfg)
	for _, f := range findings {
		arn := aws.ToString(f.Resource)
		if f.FindingType != aatypes.FindingTypeUnusedPermission || f.Status != aatypes.FindingStatusActive ||
			aws.ToString(f.ResourceOwnerAccount) != "111111111111" || !f.AnalyzedAt.Equal(advisorNow) {
			t.Errorf("finding %+v", f)
		}
		// Every page of details, two at a time.
		var details []aatypes.UnusedPermissionDetails
		in := &accessanalyzer.GetFindingV2Input{AnalyzerArn: an.Arn, Id: f.Id, MaxResults: aws.Int32(2)}
		for {
			out, err := aa.GetFindingV2(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range out.FindingDetails {
				details = append(details, d.(*aatypes.FindingDetailsMemberUnusedPermissionDetails).Value)
			}
			if out.NextToken == nil {
				break
			}
			in.NextToken = out.NextToken
		}
		// What Access Advisor says of the same principal, judged at the age.
		cutoff := advisorNow.AddDate(0, 0, -days)
		old := func(at *time.Time) bool { return at == nil || !at.After(cutoff) }
		var want, have []string
		for _, s := range advisorReport(t, iamc, arn, types.AccessAdvisorUsageGranularityTypeActionLevel, 50) {
			ns := aws.ToString(s.ServiceNamespace)
			if old(s.LastAuthenticated) {
				want = append(want, ns)
				continue
			}
			for _, a := range s.TrackedActionsLastAccessed {
				if old(a.LastAccessedTime) {
					want = append(want, ns+":"+aws.ToString(a.ActionName))
				}
			}
		}
		for _, d := range details {
			ns := aws.ToString(d.ServiceNamespace)
			if len(d.Actions) == 0 {
				have = append(have, ns)
				if !old(d.LastAccessed) {
					t.Errorf("%s: service %s reported unused but last used %v", arn, ns, d.LastAccessed)
				}
			}
			for _, a := range d.Actions {
				have = append(have, aws.ToString(a.Action))
			}
		}
		slices.Sort(want)
		slices.Sort(have)
		if !slices.Equal(want, have) {
			t.Errorf("%s: the analyzer finds unused %q, Access Advisor %q", arn, have, want)
		}
		// app used lambda 188 days ago, ec2 before IAM's tracking began, and of s3, used
		// last week, GetObject but not ListBucket.
		if arn == advisorRole && !slices.Equal(have, []string{"ec2", "lambda", "s3:ListBucket", "sts"}) {
			t.Errorf("role app: unused %q", have)
		}
	}
	if _, err := aa.GetFindingV2(ctx, &accessanalyzer.GetFindingV2Input{AnalyzerArn: aws.String("arn:aws:access-analyzer:us-east-1:111111111111:analyzer/other"), Id: findings[0].Id}); err == nil {
		t.Error("a finding of an analyzer that does not exist was answered")
	} else {
		iamWantErr(t, err, "ResourceNotFoundException", 404)
	}
}

// An analyzer that is not ACTIVE has no findings, and a world's bad setting is refused.
func TestAccessAnalyzer_inactiveAndInvalid(t *testing.T) {
	w, err := ParseWorld([]byte(advisorWorld))
	if err != nil {
		t.Fatal(err)
	}
	w.AWS.Accounts[0].AccessAnalyzer = &AccessAnalyzer{Status: "CREATING"}
	_, srv := startSim(t, w, Options{Now: func() time.Time { return advisorNow }})
	aa := accessanalyzer.NewFromConfig(iamTestConfig(srv, "AKIDROOT"))
	ctx := context.Background()
	got, err := aa.ListAnalyzers(ctx, &accessanalyzer.ListAnalyzersInput{})
	if err != nil || len(got.Analyzers) != 1 || got.Analyzers[0].Status != aatypes.AnalyzerStatusCreating {
		t.Fatalf("analyzers %+v %v", got, err)
	}
	f, err := aa.ListFindingsV2(ctx, &accessanalyzer.ListFindingsV2Input{AnalyzerArn: got.Analyzers[0].Arn})
	if err != nil || len(f.Findings) != 0 {
		t.Errorf("findings of a CREATING analyzer: %+v %v", f, err)
	}
	for _, bad := range []AccessAnalyzer{{Type: "ACCOUNT"}, {UnusedAccessAge: 400}, {Status: "ON"}} {
		w, _ := ParseWorld([]byte(advisorWorld))
		w.AWS.Accounts[0].AccessAnalyzer = &bad
		if _, err := New(w, Options{}); err == nil {
			t.Errorf("analyzer %+v accepted", bad)
		}
	}
}

// Enforcing IAM, the V2 finding calls are authorized as AWS does: ListFindingsV2 as
// access-analyzer:ListFindings, GetFindingV2 as access-analyzer:GetFinding.
func TestAccessAnalyzer_enforcedActions(t *testing.T) {
	w, err := ParseWorld([]byte(`
aws:
  enforce_iam: true
  accounts:
    - id: "111111111111"
      access_analyzer: {unused_access_age: 90}
      users:
        - name: reader
          access_keys: [{id: AKIAREADER0000000001, secret: reader-secret}]
          inline_policies:
            - name: analyzer
              document: {Statement: [{Effect: Allow, Action: ["access-analyzer:ListAnalyzers", "access-analyzer:ListFindings"], Resource: "*"}]}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, srv := startSim(t, w, Options{Now: func() time.Time { return advisorNow }})
	cfg := iamTestConfig(srv, "AKIAREADER0000000001")
	cfg.Credentials = credentials.NewStaticCredentialsProvider("AKIAREADER0000000001", "reader-secret", "")
	aa := accessanalyzer.NewFromConfig(cfg)
	ctx := context.Background()
	arn := aws.String("arn:aws:access-analyzer:us-east-1:111111111111:analyzer/unused-access")
	if _, err := aa.ListFindingsV2(ctx, &accessanalyzer.ListFindingsV2Input{AnalyzerArn: arn}); err != nil {
		t.Errorf("ListFindingsV2 with access-analyzer:ListFindings: %v", err)
	}
	_, err = aa.GetFindingV2(ctx, &accessanalyzer.GetFindingV2Input{AnalyzerArn: arn, Id: aws.String("x")})
	iamWantErr(t, err, "AccessDeniedException", 403)
	if !strings.Contains(err.Error(), "access-analyzer:GetFinding ") {
		t.Errorf("denial %v does not name access-analyzer:GetFinding", err)
	}
}
