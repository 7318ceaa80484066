package cloudsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"
	shtypes "github.com/aws/aws-sdk-go-v2/service/securityhub/types"
)

const (
	shAccount = "111111111111"
	shProduct = "arn:aws:securityhub:us-east-1:111111111111:product/111111111111/default"
)

var shT0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func shWorld() *World {
	return &World{AWS: AWS{Accounts: []*Account{{ID: shAccount, Regions: []string{"us-east-1", "eu-west-1"}}}}}
}

// shSim serves w and returns the simulator, its server and a Security Hub client.
func shSim(t *testing.T, w *World) (*Sim, *Server, *securityhub.Client) {
	t.Helper()
	sim, srv := startSim(t, w, Options{Now: func() time.Time { return shT0 }})
	return sim, srv, securityhub.NewFromConfig(iamTestConfig(srv, "AKIDSIM"))
}

// shFinding is a valid finding of the custom integration, updated at shT0 plus minutes.
func shFinding(id string, minutes int) shtypes.AwsSecurityFinding {
	at := shT0.Add(time.Duration(minutes) * time.Minute).Format(time.RFC3339)
	return shtypes.AwsSecurityFinding{
		SchemaVersion: aws.String("2018-10-08"), Id: aws.String(id), ProductArn: aws.String(shProduct),
		GeneratorId: aws.String("warden/WARDEN-AWS-NET-001"), AwsAccountId: aws.String(shAccount),
		Types:     []string{"Software and Configuration Checks/AWS Security Best Practices"},
		CreatedAt: aws.String(shT0.Format(time.RFC3339)), UpdatedAt: aws.String(at),
		Severity: &shtypes.Severity{Label: shtypes.SeverityLabelHigh},
		Title:    aws.String("Security group opens SSH to the internet"), Description: aws.String("Port 22 reachable from 0.0.0.0/0."),
		Resources:  []shtypes.Resource{{Type: aws.String("AwsEc2SecurityGroup"), Id: aws.String("arn:aws:ec2:us-east-1:111111111111:security-group/sg-1")}},
		Compliance: &shtypes.Compliance{Status: shtypes.ComplianceStatusFailed},
	}
}

func shImport(t *testing.T, c *securityhub.Client, fs ...shtypes.AwsSecurityFinding) *securityhub.BatchImportFindingsOutput {
	t.Helper()
	out, err := c.BatchImportFindings(context.Background(), &securityhub.BatchImportFindingsInput{Findings: fs})
	if err != nil {
		t.Fatalf("BatchImportFindings: %v", err)
	}
	return out
}

// shGet lists every finding that passes the filters, page by page.
func shGet(t *testing.T, c *securityhub.Client, filters *shtypes.AwsSecurityFindingFilters, pageSize int32) []shtypes.AwsSecurityFinding {
	t.Helper()
	var out []shtypes.AwsSecurityFinding
	p := securityhub.NewGetFindingsPaginator(c, &securityhub.GetFindingsInput{Filters: filters, MaxResults: aws.Int32(pageSize)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("GetFindings: %v", err)
		}
		out = append(out, page.Findings...)
	}
	return out
}

func shEq(v string) []shtypes.StringFilter {
	return []shtypes.StringFilter{{Value: aws.String(v), Comparison: shtypes.StringFilterComparisonEquals}}
}

func shIDs(fs []shtypes.AwsSecurityFinding) []string {
	var ids []string
	for _, f := range fs {
		ids = append(ids, aws.ToString(f.Id))
	}
	slices.Sort(ids)
	return ids
}

// An import creates findings with what Security Hub adds; importing the same (ProductArn,
// Id) again updates the finding only when its UpdatedAt is later, and never duplicates
// it. Findings are kept per region.
func TestSecurityHub_importUpdatesOnlyWhenNewer(t *testing.T) {
	_, _, c := shSim(t, shWorld())
	out := shImport(t, c, shFinding("f-1", 0), shFinding("f-2", 0))
	if aws.ToInt32(out.SuccessCount) != 2 || aws.ToInt32(out.FailedCount) != 0 || len(out.FailedFindings) != 0 {
		t.Fatalf("import: %+v", out)
	}
	got := shGet(t, c, &shtypes.AwsSecurityFindingFilters{Id: shEq("f-1")}, 100)
	if len(got) != 1 {
		t.Fatalf("GetFindings Id=f-1: %d findings", len(got))
	}
	f := got[0]
	if aws.ToString(f.Region) != "us-east-1" || aws.ToString(f.ProductName) != "Default" || f.RecordState != shtypes.RecordStateActive ||
		f.Workflow == nil || f.Workflow.Status != shtypes.WorkflowStatusNew || f.Severity.Label != shtypes.SeverityLabelHigh ||
		aws.ToInt32(f.Severity.Normalized) != 70 || f.FindingProviderFields == nil || f.FindingProviderFields.Severity.Label != shtypes.SeverityLabelHigh {
		t.Fatalf("stored finding: %+v", f)
	}

	older := shFinding("f-1", -5)
	older.Title = aws.String("older title")
	same := shFinding("f-1", 0)
	same.Title = aws.String("same time")
	if out := shImport(t, c, older, same); aws.ToInt32(out.SuccessCount) != 2 {
		t.Fatalf("stale imports: %+v (Security Hub ignores them, and counts them as imported)", out)
	}
	if got := shGet(t, c, &shtypes.AwsSecurityFindingFilters{Id: shEq("f-1")}, 100); aws.ToString(got[0].Title) != "Security group opens SSH to the internet" {
		t.Fatalf("a stale import changed the title to %q", aws.ToString(got[0].Title))
	}
	newer := shFinding("f-1", 10)
	newer.Title = aws.String("newer title")
	newer.RecordState = shtypes.RecordStateArchived
	shImport(t, c, newer)
	all := shGet(t, c, nil, 100)
	if len(all) != 2 {
		t.Fatalf("after updates: %d findings, want 2 (updated, not duplicated)", len(all))
	}
	got = shGet(t, c, &shtypes.AwsSecurityFindingFilters{Id: shEq("f-1")}, 100)
	if aws.ToString(got[0].Title) != "newer title" || got[0].RecordState != shtypes.RecordStateArchived || aws.ToString(got[0].UpdatedAt) != aws.ToString(newer.UpdatedAt) {
		t.Fatalf("newer import: %+v", got[0])
	}

	// Another region has its own findings, and its own product ARN.
	eu := securityhub.New(c.Options(), func(o *securityhub.Options) { o.Region = "eu-west-1" })
	if got := shGet(t, eu, nil, 100); len(got) != 0 {
		t.Fatalf("eu-west-1 sees %d findings of us-east-1", len(got))
	}
	euf := shFinding("f-1", 0)
	euf.ProductArn = aws.String(strings.Replace(shProduct, "us-east-1", "eu-west-1", 1))
	shImport(t, eu, euf)
	if got := shGet(t, eu, nil, 100); len(got) != 1 || aws.ToString(got[0].Region) != "eu-west-1" {
		t.Fatalf("eu-west-1 findings: %+v", got)
	}
}

// A request takes 1 to 100 findings: 101 are refused whole, with nothing imported, as
// AWS refuses them; 100 are imported.
func TestSecurityHub_batchOfAtMost100(t *testing.T) {
	sim, _, c := shSim(t, shWorld())
	var fs []shtypes.AwsSecurityFinding
	for i := range 101 {
		fs = append(fs, shFinding(fmt.Sprintf("f-%03d", i), 0))
	}
	_, err := c.BatchImportFindings(context.Background(), &securityhub.BatchImportFindingsInput{Findings: fs})
	iamWantErr(t, err, "InvalidInputException", 400)
	_, err = c.BatchImportFindings(context.Background(), &securityhub.BatchImportFindingsInput{Findings: []shtypes.AwsSecurityFinding{}})
	iamWantErr(t, err, "InvalidInputException", 400)
	if n := len(sim.SecurityHubFindings("", "")); n != 0 {
		t.Fatalf("refused batches stored %d findings", n)
	}
	if out := shImport(t, c, fs[:100]...); aws.ToInt32(out.SuccessCount) != 100 {
		t.Fatalf("100 findings: %+v", out)
	}
	if n := len(shGet(t, c, nil, 100)); n != 100 {
		t.Fatalf("stored %d findings, want 100", n)
	}
}

// Findings that are not valid ASFF are reported one by one in FailedFindings, with the
// error code and message Security Hub gives; the valid ones of the same batch are imported.
func TestSecurityHub_failedFindings(t *testing.T) {
	_, _, c := shSim(t, shWorld())
	noTitle := shFinding("no-title", 0)
	noTitle.Title = aws.String("")
	noResources := shFinding("no-resources", 0)
	noResources.Resources = []shtypes.Resource{}
	badSchema := shFinding("bad-schema", 0)
	badSchema.SchemaVersion = aws.String("2020-01-01")
	badDate := shFinding("bad-date", 0)
	badDate.UpdatedAt = aws.String("yesterday")
	noSeverity := shFinding("no-severity", 0)
	noSeverity.Severity, noSeverity.Types = nil, nil
	viaProvider := shFinding("provider-fields", 0) // Severity and Types given as FindingProviderFields
	viaProvider.Severity, viaProvider.Types = nil, nil
	viaProvider.FindingProviderFields = &shtypes.FindingProviderFields{Severity: &shtypes.FindingProviderSeverity{Label: shtypes.SeverityLabelLow},
		Types: []string{"Software and Configuration Checks"}}

	out := shImport(t, c, shFinding("ok", 0), noTitle, noResources, badSchema, badDate, noSeverity, viaProvider)
	if aws.ToInt32(out.SuccessCount) != 2 || aws.ToInt32(out.FailedCount) != 5 {
		t.Fatalf("counts: success %d failed %d, want 2 and 5", aws.ToInt32(out.SuccessCount), aws.ToInt32(out.FailedCount))
	}
	want := map[string]string{
		"no-title":     "data.Title should NOT be shorter than 1 characters",
		"no-resources": "data.Resources should NOT have fewer than 1 items",
		"bad-schema":   "data.SchemaVersion should be equal to one of the allowed values",
		"bad-date":     `data.UpdatedAt should match format "date-time"`,
		"no-severity":  "data should have required property 'Severity'",
	}
	for _, f := range out.FailedFindings {
		id := aws.ToString(f.Id)
		if aws.ToString(f.ErrorCode) != "InvalidInput" || !strings.HasPrefix(aws.ToString(f.ErrorMessage), "Finding does not adhere to Amazon Finding Format. ") ||
			!strings.Contains(aws.ToString(f.ErrorMessage), want[id]) {
			t.Errorf("failed finding %s: %s: %s (want InvalidInput: …%s…)", id, aws.ToString(f.ErrorCode), aws.ToString(f.ErrorMessage), want[id])
		}
		delete(want, id)
	}
	if len(want) != 0 {
		t.Errorf("not reported as failed: %v", want)
	}
	got := shGet(t, c, nil, 100)
	if ids := shIDs(got); !slices.Equal(ids, []string{"ok", "provider-fields"}) {
		t.Fatalf("imported %v, want [ok provider-fields]", ids)
	}
	for _, f := range got {
		if aws.ToString(f.Id) == "provider-fields" && (f.Severity == nil || f.Severity.Label != shtypes.SeverityLabelLow || len(f.Types) != 1) {
			t.Fatalf("Severity and Types from FindingProviderFields: %+v %v", f.Severity, f.Types)
		}
	}
}

// Only the caller's own custom integration may import, and only for the caller's account:
// anything else refuses the whole request, as AWS does.
func TestSecurityHub_refusesOtherProductsAndAccounts(t *testing.T) {
	sim, _, c := shSim(t, shWorld())
	with := func(arn, account string) shtypes.AwsSecurityFinding {
		f := shFinding("x", 0)
		f.ProductArn, f.AwsAccountId = aws.String(arn), aws.String(account)
		return f
	}
	for _, tc := range []struct {
		name, arn, account, code string
		status                   int
	}{
		{"another account's product", "arn:aws:securityhub:us-east-1:222222222222:product/222222222222/default", shAccount, "AccessDeniedException", 403},
		{"another account's finding", shProduct, "222222222222", "AccessDeniedException", 403},
		{"a partner product not enabled", "arn:aws:securityhub:us-east-1::product/prowler/prowler", shAccount, "AccessDeniedException", 403},
		{"another region's product", strings.Replace(shProduct, "us-east-1", "eu-west-1", 1), shAccount, "AccessDeniedException", 403},
		{"a malformed product ARN", "arn:aws:securityhub:::product/acme/acme", shAccount, "InvalidInputException", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.BatchImportFindings(context.Background(), &securityhub.BatchImportFindingsInput{
				Findings: []shtypes.AwsSecurityFinding{shFinding("ok", 0), with(tc.arn, tc.account)}})
			iamWantErr(t, err, tc.code, tc.status)
		})
	}
	if n := len(sim.SecurityHubFindings("", "")); n != 0 {
		t.Fatalf("refused requests stored %d findings", n)
	}
}

// GetFindings filters on the fields an exporter matches its findings by, combining one
// field's EQUALS filters with OR and different fields with AND, and pages with
// MaxResults and NextToken through every finding exactly once.
func TestSecurityHub_getFindingsFiltersAndPages(t *testing.T) {
	_, _, c := shSim(t, shWorld())
	var fs []shtypes.AwsSecurityFinding
	for i := range 25 {
		f := shFinding(fmt.Sprintf("f-%02d", i), i)
		f.GeneratorId = aws.String(fmt.Sprintf("warden/rule-%d", i%3))
		f.ProductFields = map[string]string{"warden/plan": fmt.Sprintf("plan-%d", i)}
		if i%5 == 0 {
			f.RecordState = shtypes.RecordStateArchived
			f.Compliance = &shtypes.Compliance{Status: shtypes.ComplianceStatusPassed}
		}
		fs = append(fs, f)
	}
	shImport(t, c, fs...)
	if _, err := c.BatchUpdateFindings(context.Background(), &securityhub.BatchUpdateFindingsInput{
		FindingIdentifiers: []shtypes.AwsSecurityFindingIdentifier{{Id: aws.String("f-01"), ProductArn: aws.String(shProduct)}},
		Workflow:           &shtypes.WorkflowUpdate{Status: shtypes.WorkflowStatusNotified}}); err != nil {
		t.Fatal(err)
	}
	ids := func(prefix string, from, to, step int, skip func(int) bool) []string {
		var out []string
		for i := from; i < to; i += step {
			if skip == nil || !skip(i) {
				out = append(out, fmt.Sprintf("%s%02d", prefix, i))
			}
		}
		return out
	}
	archived := func(i int) bool { return i%5 == 0 }
	tests := []struct {
		name    string
		filters *shtypes.AwsSecurityFindingFilters
		want    []string
	}{
		{"Id", &shtypes.AwsSecurityFindingFilters{Id: shEq("f-07")}, []string{"f-07"}},
		{"Id, two values", &shtypes.AwsSecurityFindingFilters{Id: append(shEq("f-07"), shEq("f-08")...)}, []string{"f-07", "f-08"}},
		{"ProductArn", &shtypes.AwsSecurityFindingFilters{ProductArn: shEq(shProduct)}, ids("f-", 0, 25, 1, nil)},
		{"another ProductArn", &shtypes.AwsSecurityFindingFilters{ProductArn: shEq("arn:aws:securityhub:us-east-1::product/aws/guardduty")}, nil},
		{"GeneratorId", &shtypes.AwsSecurityFindingFilters{GeneratorId: shEq("warden/rule-1")}, ids("f-", 1, 25, 3, nil)},
		{"RecordState", &shtypes.AwsSecurityFindingFilters{RecordState: shEq("ARCHIVED")}, ids("f-", 0, 25, 5, nil)},
		{"ComplianceStatus", &shtypes.AwsSecurityFindingFilters{ComplianceStatus: shEq("FAILED")}, ids("f-", 0, 25, 1, archived)},
		{"WorkflowStatus", &shtypes.AwsSecurityFindingFilters{WorkflowStatus: shEq("NOTIFIED")}, []string{"f-01"}},
		{"AwsAccountId", &shtypes.AwsSecurityFindingFilters{AwsAccountId: shEq(shAccount)}, ids("f-", 0, 25, 1, nil)},
		{"AND across fields", &shtypes.AwsSecurityFindingFilters{GeneratorId: shEq("warden/rule-0"), RecordState: shEq("ACTIVE")},
			ids("f-", 3, 25, 3, archived)},
		{"NOT_EQUALS", &shtypes.AwsSecurityFindingFilters{RecordState: []shtypes.StringFilter{{Value: aws.String("ARCHIVED"), Comparison: shtypes.StringFilterComparisonNotEquals}}},
			ids("f-", 0, 25, 1, archived)},
		{"PREFIX", &shtypes.AwsSecurityFindingFilters{Id: []shtypes.StringFilter{{Value: aws.String("f-1"), Comparison: shtypes.StringFilterComparisonPrefix}}},
			ids("f-", 10, 20, 1, nil)},
		{"ProductFields entry", &shtypes.AwsSecurityFindingFilters{ProductFields: []shtypes.MapFilter{{Key: aws.String("warden/plan"), Value: aws.String("plan-7"),
			Comparison: shtypes.MapFilterComparisonEquals}}}, []string{"f-07"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := shIDs(shGet(t, c, tc.filters, 7)); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}

	t.Run("pages", func(t *testing.T) {
		first, err := c.GetFindings(context.Background(), &securityhub.GetFindingsInput{MaxResults: aws.Int32(10)})
		if err != nil || len(first.Findings) != 10 || first.NextToken == nil {
			t.Fatalf("first page: %d findings, token %v, %v", len(first.Findings), first.NextToken, err)
		}
		// The default order is the most recently updated first.
		if aws.ToString(first.Findings[0].Id) != "f-24" {
			t.Fatalf("first finding %s, want f-24 (latest UpdatedAt)", aws.ToString(first.Findings[0].Id))
		}
		all := shGet(t, c, nil, 10)
		if got := shIDs(all); len(all) != 25 || !slices.Equal(got, ids("f-", 0, 25, 1, nil)) {
			t.Fatalf("paged through %d findings: %v", len(all), got)
		}
		_, err = c.GetFindings(context.Background(), &securityhub.GetFindingsInput{MaxResults: aws.Int32(101)})
		iamWantErr(t, err, "InvalidInputException", 400)
	})
	t.Run("a filter the simulator does not serve is refused", func(t *testing.T) {
		_, err := c.GetFindings(context.Background(), &securityhub.GetFindingsInput{Filters: &shtypes.AwsSecurityFindingFilters{
			ResourceAwsEc2InstanceVpcId: shEq("vpc-1")}})
		iamWantErr(t, err, "InvalidInputException", 400)
	})
}

// BatchUpdateFindings sets the customer's fields (workflow, note, severity); the
// provider's later imports keep them, except that Security Hub reopens a resolved finding
// that comes back ACTIVE. Unknown and duplicated identifiers are reported, not refused.
func TestSecurityHub_batchUpdateFindings(t *testing.T) {
	_, _, c := shSim(t, shWorld())
	shImport(t, c, shFinding("f-1", 0), shFinding("f-2", 0))
	ctx := context.Background()
	id := func(s string) shtypes.AwsSecurityFindingIdentifier {
		return shtypes.AwsSecurityFindingIdentifier{Id: aws.String(s), ProductArn: aws.String(shProduct)}
	}
	out, err := c.BatchUpdateFindings(ctx, &securityhub.BatchUpdateFindingsInput{
		FindingIdentifiers: []shtypes.AwsSecurityFindingIdentifier{id("f-1"), id("missing")},
		Workflow:           &shtypes.WorkflowUpdate{Status: shtypes.WorkflowStatusResolved},
		Note:               &shtypes.NoteUpdate{Text: aws.String("fixed by warden (plan 42)"), UpdatedBy: aws.String("warden")},
		Severity:           &shtypes.SeverityUpdate{Label: shtypes.SeverityLabelCritical},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.ProcessedFindings) != 1 || aws.ToString(out.ProcessedFindings[0].Id) != "f-1" || len(out.UnprocessedFindings) != 1 ||
		aws.ToString(out.UnprocessedFindings[0].ErrorCode) != "FindingNotFound" || aws.ToString(out.UnprocessedFindings[0].FindingIdentifier.Id) != "missing" {
		t.Fatalf("BatchUpdateFindings: processed %+v, unprocessed %+v", out.ProcessedFindings, out.UnprocessedFindings)
	}
	get := func() shtypes.AwsSecurityFinding {
		return shGet(t, c, &shtypes.AwsSecurityFindingFilters{Id: shEq("f-1")}, 100)[0]
	}
	f := get()
	if f.Workflow.Status != shtypes.WorkflowStatusResolved || f.Note == nil || aws.ToString(f.Note.Text) != "fixed by warden (plan 42)" ||
		aws.ToString(f.Note.UpdatedBy) != "warden" || f.Severity.Label != shtypes.SeverityLabelCritical || aws.ToInt32(f.Severity.Normalized) != 90 {
		t.Fatalf("updated finding: workflow %+v note %+v severity %+v", f.Workflow, f.Note, f.Severity)
	}

	// The provider's newer import (archived) keeps the customer's workflow, note and severity.
	archived := shFinding("f-1", 5)
	archived.RecordState = shtypes.RecordStateArchived
	archived.Workflow = &shtypes.Workflow{Status: shtypes.WorkflowStatusNew}
	shImport(t, c, archived)
	f = get()
	if f.Workflow.Status != shtypes.WorkflowStatusResolved || f.Note == nil || f.Severity.Label != shtypes.SeverityLabelCritical || f.RecordState != shtypes.RecordStateArchived {
		t.Fatalf("after the provider's update: workflow %+v note %+v severity %+v state %s", f.Workflow, f.Note, f.Severity, f.RecordState)
	}
	// Coming back ACTIVE reopens it.
	shImport(t, c, shFinding("f-1", 10))
	if f = get(); f.Workflow.Status != shtypes.WorkflowStatusNew || f.RecordState != shtypes.RecordStateActive {
		t.Fatalf("reactivated: workflow %s state %s, want NEW and ACTIVE", f.Workflow.Status, f.RecordState)
	}

	out, err = c.BatchUpdateFindings(ctx, &securityhub.BatchUpdateFindingsInput{
		FindingIdentifiers: []shtypes.AwsSecurityFindingIdentifier{id("f-2"), id("f-2")}, Workflow: &shtypes.WorkflowUpdate{Status: shtypes.WorkflowStatusSuppressed}})
	if err != nil || len(out.UnprocessedFindings) != 2 || aws.ToString(out.UnprocessedFindings[0].ErrorCode) != "DuplicatedFindingIdentifier" {
		t.Fatalf("duplicated identifiers: %+v, %v", out, err)
	}
	_, err = c.BatchUpdateFindings(ctx, &securityhub.BatchUpdateFindingsInput{
		FindingIdentifiers: []shtypes.AwsSecurityFindingIdentifier{id("f-2")}, Workflow: &shtypes.WorkflowUpdate{Status: "CLOSED"}})
	iamWantErr(t, err, "InvalidInputException", 400)
	_, err = c.BatchUpdateFindings(ctx, &securityhub.BatchUpdateFindingsInput{FindingIdentifiers: []shtypes.AwsSecurityFindingIdentifier{id("f-2")}})
	iamWantErr(t, err, "InvalidInputException", 400)
}

// An account whose world disables Security Hub fails each imported finding with
// InvalidAccess and refuses reads until EnableSecurityHub; enabling twice conflicts.
func TestSecurityHub_disabledUntilEnabled(t *testing.T) {
	w := shWorld()
	w.AWS.Accounts[0].SecurityHubDisabled = true
	_, _, c := shSim(t, w)
	ctx := context.Background()
	_, err := c.DescribeHub(ctx, &securityhub.DescribeHubInput{})
	iamWantErr(t, err, "InvalidAccessException", 401)
	_, err = c.GetFindings(ctx, &securityhub.GetFindingsInput{})
	iamWantErr(t, err, "InvalidAccessException", 401)
	out := shImport(t, c, shFinding("f-1", 0))
	if aws.ToInt32(out.FailedCount) != 1 || aws.ToString(out.FailedFindings[0].ErrorCode) != "InvalidAccess" {
		t.Fatalf("import into a disabled hub: %+v", out)
	}
	if _, err := c.EnableSecurityHub(ctx, &securityhub.EnableSecurityHubInput{}); err != nil {
		t.Fatal(err)
	}
	hub, err := c.DescribeHub(ctx, &securityhub.DescribeHubInput{})
	if err != nil || aws.ToString(hub.HubArn) != "arn:aws:securityhub:us-east-1:111111111111:hub/default" || aws.ToString(hub.SubscribedAt) == "" {
		t.Fatalf("DescribeHub: %+v, %v", hub, err)
	}
	if out := shImport(t, c, shFinding("f-1", 0)); aws.ToInt32(out.SuccessCount) != 1 {
		t.Fatalf("import after enabling: %+v", out)
	}
	_, err = c.EnableSecurityHub(ctx, &securityhub.EnableSecurityHubInput{})
	iamWantErr(t, err, "ResourceConflictException", 409)
}

// Every Security Hub call is counted by operation (writes apart), and the admin API
// answers the stored findings, so that a test in another process can check that an
// unchanged sweep sends nothing and what the hub holds.
func TestSecurityHub_countsCallsAndAdminReadsFindings(t *testing.T) {
	sim, srv, c := shSim(t, shWorld())
	shImport(t, c, shFinding("f-1", 0))
	shGet(t, c, nil, 100)
	if n := sim.CallsTo("securityhub"); n != 2 {
		t.Fatalf("CallsTo(securityhub) = %d, want 2", n)
	}
	if w := sim.Writes(); w["securityhub:BatchImportFindings"] != 1 || w["securityhub:GetFindings"] != 0 {
		t.Fatalf("Writes() = %v", w)
	}
	resp, err := http.Get(srv.URL + "/_sim/securityhub/findings?account=" + shAccount + "&region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var docs []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&docs); err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0]["Id"] != "f-1" || docs[0]["ProductArn"] != shProduct || docs[0]["RecordState"] != "ACTIVE" {
		t.Fatalf("GET /_sim/securityhub/findings: %v", docs)
	}
	if got := sim.SecurityHubFindings(shAccount, "eu-west-1"); len(got) != 0 {
		t.Fatalf("eu-west-1: %v", got)
	}
}

// With IAM enforced, a user's Security Hub calls need securityhub actions in its
// policies: BatchImportFindings on the product it imports for, the others on the hub.
func TestSecurityHub_enforcesIdentityPolicies(t *testing.T) {
	_, srv := enforceSim(t, Options{EnforceIAM: true}, false)
	ctx := context.Background()
	dev := securityhub.NewFromConfig(keyConfig(srv, "us-east-1", "AKIADEV0000000000001", "dev-secret"))
	_, err := dev.BatchImportFindings(ctx, &securityhub.BatchImportFindingsInput{Findings: []shtypes.AwsSecurityFinding{shFinding("f-1", 0)}})
	wantDenied(t, err, "AccessDeniedException", 403, "User: "+devARN+" is not authorized to perform: securityhub:BatchImportFindings on resource: "+
		shProduct+" because no identity-based policy allows the securityhub:BatchImportFindings action")
	_, err = dev.GetFindings(ctx, &securityhub.GetFindingsInput{})
	wantDenied(t, err, "AccessDeniedException", 403, "User: "+devARN+" is not authorized to perform: securityhub:GetFindings on resource: "+
		"arn:aws:securityhub:us-east-1:111111111111:hub/default because no identity-based policy allows the securityhub:GetFindings action")
	admin := securityhub.NewFromConfig(keyConfig(srv, "us-east-1", "AKIAADM0000000000001", "admin-secret"))
	if out := shImport(t, admin, shFinding("f-1", 0)); aws.ToInt32(out.SuccessCount) != 1 {
		t.Fatalf("admin's import: %+v", out)
	}
}
