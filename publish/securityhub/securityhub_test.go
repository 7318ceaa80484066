package securityhub_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/securityhub/types"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/conformance"
	"github.com/warden-sec/warden/publish"
	publishsh "github.com/warden-sec/warden/publish/securityhub"
	"github.com/warden-sec/warden/store"
)

const (
	account = conformance.Account
	region  = "us-east-1"
)

// backend is a Security Hub to test against: fresh gives an empty one for a case and
// its endpoint; with disabled, one whose account has not enabled Security Hub (ok false
// when the backend cannot: moto imports findings into any account).
type backend struct {
	name  string
	start func(t *testing.T) (fresh func(t *testing.T, disabled bool) (url string, ok bool))
	// importOnly: the backend serves no BatchUpdateFindings and lets an import change a
	// finding's workflow (moto; docs/conformance.md).
	importOnly bool
}

// backends are the Security Hubs the suite runs on: warden's simulator and moto's.
func backends() []backend {
	return []backend{
		{name: "cloudsim", start: func(*testing.T) func(*testing.T, bool) (string, bool) {
			return func(t *testing.T, disabled bool) (string, bool) {
				_, url := simtest.Start(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{
					{ID: account, Regions: []string{region}, SecurityHubDisabled: disabled}}}}, cloudsim.Options{})
				return url, true
			}
		}},
		{name: "moto", start: func(t *testing.T) func(*testing.T, bool) (string, bool) {
			url := conformance.StartMoto(t)
			return func(t *testing.T, disabled bool) (string, bool) { conformance.MotoReset(t, url); return url, !disabled }
		}, importOnly: true},
	}
}

// counter counts the requests an SDK client sends, by operation (the path of
// Security Hub's REST API: /findings/import is BatchImportFindings).
type counter struct {
	inner aws.HTTPClient
	mu    sync.Mutex
	n     map[string]int
}

func (c *counter) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.n[r.URL.Path]++
	c.mu.Unlock()
	return c.inner.Do(r)
}

// imports returns how many BatchImportFindings calls were made, and resets the count.
func (c *counter) imports() int { return c.take()["/findings/import"] }

// total returns how many calls were made, whichever, and resets the count.
func (c *counter) total() int {
	n := 0
	for _, v := range c.take() {
		n += v
	}
	return n
}

func (c *counter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// env is one case: a fresh Security Hub, a fresh store, the sink and its call counter.
type env struct {
	t  *testing.T
	st *store.Store
	// client reads Security Hub back, its calls not counted.
	client *securityhub.Client
	sink   *publishsh.Sink
	calls  *counter
}

func newEnv(t *testing.T, b backend, url string) *env {
	t.Helper()
	cfg := simtest.AWSConfig(url)
	// The reader retries as the SDK does by default: it checks what the sink left, and
	// a read cut on the loopback (seen about once in twenty runs, not explained) is not
	// the sink's doing. The sink's own calls get one attempt, so that they are counted.
	reader := securityhub.NewFromConfig(cfg)
	cfg.RetryMaxAttempts = 1
	calls := &counter{inner: http.DefaultClient, n: map[string]int{}}
	cfg.HTTPClient = calls
	sink, err := publishsh.New(securityhub.NewFromConfig(cfg), publishsh.Options{Region: region, Account: account, ImportOnly: b.importOnly})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &env{t: t, st: st, client: reader, sink: sink, calls: calls}
}

// run publishes items at now and fails the test on an error.
func (e *env) run(items []publish.Item, now time.Time) publish.Result {
	e.t.Helper()
	res, err := publish.Run(context.Background(), e.st, e.sink, items, now)
	if err != nil {
		e.t.Fatalf("publish: %v", err)
	}
	return res
}

// hub reads back every finding Security Hub holds, by Id, through GetFindings.
func (e *env) hub() map[string]types.AwsSecurityFinding {
	e.t.Helper()
	out := map[string]types.AwsSecurityFinding{}
	p := securityhub.NewGetFindingsPaginator(e.client, &securityhub.GetFindingsInput{MaxResults: aws.Int32(100)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			e.t.Fatalf("GetFindings: %v", err)
		}
		for _, f := range page.Findings {
			out[aws.ToString(f.Id)] = f
		}
	}
	return out
}

// finding is an AWS finding of policy on resource n, open.
func finding(policy string, n int) findings.Finding {
	res := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/sg-%04d", account, n)
	return findings.Finding{
		Policy: policy, Title: "Security group opens SSH to the internet", Severity: findings.High,
		Resource: res, ResourceType: "aws.ec2.security_group", Account: account, Region: region,
		Scope:       "aws/" + account + "/ec2/" + region,
		Message:     fmt.Sprintf("sg-%04d opens SSH to 0.0.0.0/0", n),
		Fingerprint: findings.Fingerprint(policy, account, res, "22"),
		Remediation: findings.Remediation{Action: "aws.ec2.revoke_ingress", Risk: findings.RiskMedium},
		Frameworks:  map[string][]string{"cis-aws-3.0": {"5.2"}},
		Status:      findings.StatusOpen,
		FirstSeen:   time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC),
	}
}

// TestSecurityHub runs every case on every backend, each on an empty Security Hub.
func TestSecurityHub(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			fresh := b.start(t)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					url, ok := fresh(t, c.disabled)
					if !ok {
						t.Skipf("%s cannot start with Security Hub disabled (docs/conformance.md)", b.name)
					}
					c.run(t, newEnv(t, b, url))
				})
			}
		})
	}
}

var cases = []struct {
	name string
	run  func(t *testing.T, e *env)
	// disabled starts the case with Security Hub not enabled in the account.
	disabled bool
}{
	{"lifecycle", testLifecycle, false},
	{"unchangedSweepSendsNothing", testUnchanged, false},
	{"batchesOfAHundred", testBatches, false},
	{"failedFindingsRecordedAndRetried", testFailed, true},
}

// A finding's life in Security Hub follows warden's: open is an active, failed, new
// finding; its fix waiting for approval notifies; waived is suppressed; unknown is not
// available; resolved (no longer in the findings) is archived, passed and resolved. The
// same Id is updated throughout, never duplicated.
func testLifecycle(t *testing.T, e *env) {
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	open, waived, unknown := finding("WARDEN-AWS-NET-001", 1), finding("WARDEN-AWS-NET-001", 2), finding("WARDEN-AWS-NET-001", 3)
	waived.Status = findings.StatusWaived
	waived.Waiver = &findings.WaiverRef{Owner: "alice", Reason: "bastion host", Expires: t0.Add(30 * 24 * time.Hour)}
	unknown.Status = findings.StatusUnknown
	items := []publish.Item{{Finding: open, Fix: &publish.Fix{Action: "aws.ec2.revoke_ingress"}}, {Finding: waived}, {Finding: unknown}}
	res := e.run(items, t0)
	if res.Sent != 3 || res.Batches != 1 || len(res.Refused) != 0 || e.calls.imports() != 1 {
		t.Fatalf("first run: %s", res)
	}
	hub := e.hub()
	if len(hub) != 3 {
		t.Fatalf("Security Hub holds %d findings, want 3", len(hub))
	}
	want := func(fp string, record types.RecordState, comp types.ComplianceStatus, wf types.WorkflowStatus) types.AwsSecurityFinding {
		t.Helper()
		f, ok := hub[publishsh.ID(fp)]
		if !ok {
			t.Fatalf("finding %s not in Security Hub", fp)
		}
		if f.RecordState != record || f.Compliance == nil || f.Compliance.Status != comp || f.Workflow == nil || f.Workflow.Status != wf {
			t.Errorf("finding %s: RecordState %s, Compliance %v, Workflow %v; want %s, %s, %s", fp, f.RecordState, f.Compliance, f.Workflow, record, comp, wf)
		}
		return f
	}
	f := want(open.Fingerprint, types.RecordStateActive, types.ComplianceStatusFailed, types.WorkflowStatusNew)
	if got := aws.ToString(f.ProductArn); got != "arn:aws:securityhub:us-east-1:"+account+":product/"+account+"/default" {
		t.Errorf("ProductArn = %s", got)
	}
	if aws.ToString(f.SchemaVersion) != "2018-10-08" || aws.ToString(f.GeneratorId) != "WARDEN-AWS-NET-001" || aws.ToString(f.AwsAccountId) != account {
		t.Errorf("SchemaVersion %s, GeneratorId %s, AwsAccountId %s", aws.ToString(f.SchemaVersion), aws.ToString(f.GeneratorId), aws.ToString(f.AwsAccountId))
	}
	if f.Severity == nil || f.Severity.Label != types.SeverityLabelHigh || len(f.Resources) != 1 ||
		aws.ToString(f.Resources[0].Id) != open.Resource || aws.ToString(f.Resources[0].Type) != "AwsEc2SecurityGroup" {
		t.Errorf("severity %v, resources %+v", f.Severity, f.Resources)
	}
	if f.ProductFields["warden/fix/action"] != "aws.ec2.revoke_ingress" || f.ProductFields["warden/fix/approval"] != "not requested" ||
		!strings.Contains(aws.ToString(f.Remediation.Recommendation.Text), "aws.ec2.revoke_ingress") {
		t.Errorf("fix: product fields %v, remediation %+v", f.ProductFields, f.Remediation)
	}
	if w := want(waived.Fingerprint, types.RecordStateActive, types.ComplianceStatusFailed, types.WorkflowStatusSuppressed); w.ProductFields["warden/waiver/owner"] != "alice" {
		t.Errorf("waived finding's product fields: %v", w.ProductFields)
	}
	want(unknown.Fingerprint, types.RecordStateActive, types.ComplianceStatusNotAvailable, types.WorkflowStatusNew)
	created := aws.ToString(f.CreatedAt)

	// The fix is planned and waits for approval: the finding notifies, with the fix's
	// state; the two others are not sent again. The open finding then drops out of the
	// findings (resolved) on the next sweep.
	t1 := t0.Add(10 * time.Minute)
	items[0].Fix = &publish.Fix{Action: "aws.ec2.revoke_ingress", ID: "act-1", State: "pending_approval"}
	if res := e.run(items, t1); res.Sent != 1 || res.Unchanged != 2 || e.calls.imports() != 1 {
		t.Fatalf("second run: %s", res)
	}
	hub = e.hub()
	f = want(open.Fingerprint, types.RecordStateActive, types.ComplianceStatusFailed, types.WorkflowStatusNotified)
	if f.ProductFields["warden/fix/state"] != "pending_approval" || f.ProductFields["warden/fix/approval"] != "pending" {
		t.Errorf("fix awaiting approval: product fields %v", f.ProductFields)
	}
	if aws.ToString(f.CreatedAt) != created || aws.ToString(f.UpdatedAt) != t1.Format(time.RFC3339Nano) {
		t.Errorf("updated finding: CreatedAt %s (was %s), UpdatedAt %s (want %s)", aws.ToString(f.CreatedAt), created, aws.ToString(f.UpdatedAt), t1)
	}

	t2 := t1.Add(10 * time.Minute)
	if res := e.run(items[1:], t2); res.Sent != 1 || res.Resolved != 1 || e.calls.imports() != 1 {
		t.Fatalf("third run: %s", res)
	}
	hub = e.hub()
	if len(hub) != 3 {
		t.Fatalf("Security Hub holds %d findings after the updates, want 3 (updated, not duplicated)", len(hub))
	}
	want(open.Fingerprint, types.RecordStateArchived, types.ComplianceStatusPassed, types.WorkflowStatusResolved)
	// Resolved once is resolved: the next sweep sends nothing.
	if res := e.run(items[1:], t2.Add(time.Minute)); res.Sent != 0 || e.calls.total() != 0 {
		t.Fatalf("fourth run: %s", res)
	}
}

// A sweep that changed nothing makes no call; one that changed one finding makes one
// call with that finding only.
func testUnchanged(t *testing.T, e *env) {
	var items []publish.Item
	for i := range 30 {
		items = append(items, publish.Item{Finding: finding("WARDEN-AWS-NET-001", i)})
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	if res := e.run(items, t0); res.Sent != 30 || e.calls.total() != 1 {
		t.Fatalf("first run: %s", res)
	}
	for i := range 3 {
		res := e.run(items, t0.Add(time.Duration(i+1)*time.Minute))
		if n := e.calls.total(); n != 0 || res.Sent != 0 || res.Unchanged != 30 {
			t.Fatalf("unchanged sweep %d: %d calls, %s", i+1, n, res)
		}
	}
	items[7].Finding.Severity = findings.Critical
	if res := e.run(items, t0.Add(time.Hour)); res.Sent != 1 || res.Unchanged != 29 || e.calls.total() != 1 {
		t.Fatalf("one finding changed: %s", res)
	}
	f := e.hub()[publishsh.ID(items[7].Finding.Fingerprint)]
	if f.Severity == nil || f.Severity.Label != types.SeverityLabelCritical {
		t.Errorf("changed finding's severity: %v", f.Severity)
	}
}

// 250 findings go in three BatchImportFindings calls (100, 100, 50), and Security Hub
// holds all 250.
func testBatches(t *testing.T, e *env) {
	var items []publish.Item
	for i := range 250 {
		items = append(items, publish.Item{Finding: finding("WARDEN-AWS-NET-001", i)})
	}
	res := e.run(items, time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC))
	if n := e.calls.total(); n != 3 || res.Batches != 3 || res.Sent != 250 {
		t.Fatalf("250 findings: %d calls, %s", n, res)
	}
	if n := len(e.hub()); n != 250 {
		t.Errorf("Security Hub holds %d findings, want 250", n)
	}
}

// Findings Security Hub refuses (FailedFindings: here, the account has not enabled it)
// are counted and recorded with the reason, never taken for sent; the next run sends
// them again, and once Security Hub is enabled they are imported.
func testFailed(t *testing.T, e *env) {
	var items []publish.Item
	for i := range 3 {
		items = append(items, publish.Item{Finding: finding("WARDEN-AWS-NET-001", i)})
	}
	t0 := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	res := e.run(items, t0)
	if res.Sent != 0 || len(res.Refused) != 3 || e.calls.total() != 1 {
		t.Fatalf("first run: %s", res)
	}
	if r := res.Refused[0]; !strings.Contains(r.Reason, "InvalidAccess") || r.Policy != "WARDEN-AWS-NET-001" {
		t.Errorf("refusal: %+v", r)
	}
	var sent map[string]publish.Sent
	err := e.st.Read(context.Background(), func(q *store.Reader) (err error) {
		sent, err = publish.Ledger(context.Background(), q, e.sink.Name())
		return
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := sent[items[0].Finding.Fingerprint]; s.Status != "" || s.Failures != 1 || !strings.Contains(s.Error, "not subscribed") {
		t.Errorf("recorded refusal: %+v", s)
	}
	// Still refused: sent again, counted again; one that went away meanwhile is
	// forgotten, never having been accepted.
	if res := e.run(items[:2], t0.Add(time.Minute)); len(res.Refused) != 2 || e.calls.total() != 1 {
		t.Fatalf("second run: %s", res)
	}
	err = e.st.Read(context.Background(), func(q *store.Reader) (err error) {
		sent, err = publish.Ledger(context.Background(), q, e.sink.Name())
		return
	})
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := sent[items[2].Finding.Fingerprint]; ok || sent[items[0].Finding.Fingerprint].Failures != 2 {
		t.Errorf("after the second refusal: %+v (gone finding %+v)", sent[items[0].Finding.Fingerprint], s)
	}
	if _, err := e.client.EnableSecurityHub(context.Background(), &securityhub.EnableSecurityHubInput{}); err != nil {
		t.Fatal(err)
	}
	if res := e.run(items, t0.Add(2*time.Minute)); res.Sent != 3 || len(res.Refused) != 0 {
		t.Fatalf("after enabling Security Hub: %s", res)
	}
	if n := len(e.hub()); n != 3 {
		t.Errorf("Security Hub holds %d findings, want 3", n)
	}
}
