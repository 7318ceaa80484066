package sinks_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"
	"github.com/aws/aws-sdk-go-v2/service/securityhub/types"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/publish"
	publishsh "github.com/warden-sec/warden/publish/securityhub"
	"github.com/warden-sec/warden/publish/sinks"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

const account = "123456789012"

// setup starts a simulator with Security Hub in account, points the AWS SDK's standard
// chain at it as an operator would, and writes a config whose export: section sends
// there. It returns the simulator, its URL, the config file and the database path.
func setup(t *testing.T) (*cloudsim.Sim, string, string, string) {
	t.Helper()
	sim, url := simtest.Start(t, &cloudsim.World{AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{
		{ID: account, Regions: []string{"eu-west-1"}}}}}, cloudsim.Options{})
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "AKIAWARDENEXPORTTEST", "AWS_SECRET_ACCESS_KEY": "secret",
		"AWS_SESSION_TOKEN": "", "AWS_REGION": "us-east-1", "AWS_PROFILE": "", "AWS_EC2_METADATA_DISABLED": "true",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
	} {
		t.Setenv(k, v)
	}
	cfg := filepath.Join(dir, "warden.yaml")
	db := filepath.Join(dir, "warden.db")
	yaml := fmt.Sprintf("db: %s\nexport:\n  securityhub:\n    region: eu-west-1\n    account: \"%s\"\n", db, account)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return sim, url, cfg, db
}

func awsFinding(policy, resource string, sev findings.Severity) findings.Finding {
	return findings.Finding{Policy: policy, Title: policy + " title", Severity: sev, Resource: resource,
		ResourceType: "aws.iam.user", Account: account, Region: "global", Scope: "aws/" + account + "/iam",
		Message: resource + " violates " + policy, Fingerprint: findings.Fingerprint(policy, account, resource, ""),
		Remediation: findings.Remediation{Action: "aws.iam.deactivate_access_key", Risk: findings.RiskLow}, Status: findings.StatusOpen}
}

// hubFindings reads Security Hub's findings back through GetFindings, by Id.
func hubFindings(t *testing.T, url string) map[string]types.AwsSecurityFinding {
	t.Helper()
	cfg := simtest.AWSConfig(url)
	cfg.Region = "eu-west-1"
	c := securityhub.NewFromConfig(cfg)
	out := map[string]types.AwsSecurityFinding{}
	p := securityhub.NewGetFindingsPaginator(c, &securityhub.GetFindingsInput{})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range page.Findings {
			out[aws.ToString(f.Id)] = f
		}
	}
	return out
}

// warden report --to securityhub sends the latest scan's findings, then only what
// changed; a finding the next scan no longer has is archived.
func TestReport_fromTheHistory(t *testing.T) {
	sim, url, cfg, db := setup(t)
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	alice := awsFinding("WARDEN-AWS-IAM-001", "arn:aws:iam::"+account+":user/alice", findings.High)
	bob := awsFinding("WARDEN-AWS-IAM-001", "arn:aws:iam::"+account+":user/bob", findings.Medium)
	all := func(string) bool { return true }
	save := func(fs ...findings.Finding) {
		t.Helper()
		if _, _, err := st.SaveScan(ctx, &store.ScanRecord{StartedAt: time.Now(), FinishedAt: time.Now(), Snapshot: "s.json"}, fs, all, nil); err != nil {
			t.Fatal(err)
		}
	}
	report := func() string {
		t.Helper()
		var out strings.Builder
		if err := sinks.Report(ctx, cfg, "", "securityhub", &out); err != nil {
			t.Fatalf("report --to securityhub: %v\n%s", err, out.String())
		}
		return out.String()
	}

	save(alice, bob)
	if out := report(); !strings.Contains(out, "2 sent") || !strings.Contains(out, "from the scan history") {
		t.Errorf("first report: %s", out)
	}
	hub := hubFindings(t, url)
	if len(hub) != 2 || hub[publishsh.ID(alice.Fingerprint)].RecordState != types.RecordStateActive {
		t.Fatalf("Security Hub after the first report: %v", hub)
	}
	sim.ResetCalls()
	if out := report(); !strings.Contains(out, "2 unchanged, 0 sent") || sim.CallsTo("securityhub") != 0 {
		t.Errorf("nothing changed: %s, %d calls", out, sim.CallsTo("securityhub"))
	}
	save(alice)
	if out := report(); !strings.Contains(out, "1 sent (1 resolved)") {
		t.Errorf("bob's finding resolved: %s", out)
	}
	f := hubFindings(t, url)[publishsh.ID(bob.Fingerprint)]
	if f.RecordState != types.RecordStateArchived || f.Workflow.Status != types.WorkflowStatusResolved || f.Compliance.Status != types.ComplianceStatusPassed {
		t.Errorf("resolved finding in Security Hub: %s %v %v", f.RecordState, f.Workflow, f.Compliance)
	}
}

// With a daemon's state in the store, its findings are what is sent (not the history's),
// with the status the daemon gave each one.
func TestReport_fromTheDaemonState(t *testing.T) {
	_, url, cfg, db := setup(t)
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	open := awsFinding("WARDEN-AWS-IAM-001", "arn:aws:iam::"+account+":user/alice", findings.High)
	unknown := awsFinding("WARDEN-AWS-IAM-002", "arn:aws:iam::"+account+":user/carol", findings.Low)
	gone := awsFinding("WARDEN-AWS-IAM-003", "arn:aws:iam::"+account+":user/dave", findings.Low)
	err = st.InTx(ctx, func(tx *store.Tx) error {
		if err := state.PutScope(ctx, tx, state.Scope{Scope: snapshot.Scope{ID: "aws/" + account + "/iam", Status: snapshot.ScopeOK}, ReadAt: now}); err != nil {
			return err
		}
		for _, fs := range []state.Finding{
			{Finding: open, Status: findings.StatusOpen, OpenedAt: now, SeenAt: now},
			{Finding: unknown, Status: findings.StatusUnknown, OpenedAt: now, SeenAt: now},
			{Finding: gone, Status: findings.StatusResolved, OpenedAt: now, SeenAt: now, ResolvedAt: now},
		} {
			if err := state.PutFinding(ctx, tx, fs); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := sinks.Report(ctx, cfg, "", "securityhub", &out); err != nil {
		t.Fatalf("report: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "from the daemon state") || !strings.Contains(out.String(), "2 findings") {
		t.Errorf("report: %s", out.String())
	}
	hub := hubFindings(t, url)
	if len(hub) != 2 {
		t.Fatalf("Security Hub holds %d findings, want the 2 not resolved", len(hub))
	}
	if f := hub[publishsh.ID(unknown.Fingerprint)]; f.Compliance.Status != types.ComplianceStatusNotAvailable {
		t.Errorf("unknown finding: %v", f.Compliance)
	}
}

// --to names a place the config must configure; nothing is sent before the store has
// anything to send.
func TestReport_refuses(t *testing.T) {
	_, _, cfg, db := setup(t)
	ctx := context.Background()
	var out strings.Builder
	if err := sinks.Report(ctx, cfg, "", "scc", &out); err == nil || !strings.Contains(err.Error(), "no export.scc section") {
		t.Errorf("--to scc without export.scc: %v", err)
	}
	if err := sinks.Report(ctx, cfg, "", "splunk", &out); err == nil || !strings.Contains(err.Error(), `unknown place "splunk"`) {
		t.Errorf("--to splunk: %v", err)
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := sinks.Report(ctx, cfg, "", "securityhub", &out); err == nil || !strings.Contains(err.Error(), publish.ErrNothingRead.Error()) {
		t.Errorf("an empty store: %v", err)
	}
}
