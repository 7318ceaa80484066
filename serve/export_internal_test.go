package serve

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/metrics"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// TestExportTask: the export: section is one task of serve, every export.every. Before
// the daemon read anything it waits (Later) and sends nothing; then it sends the
// daemon's findings to Security Hub and Security Command Center, and a run with nothing
// changed makes no call to either.
func TestExportTask(t *testing.T) {
	ctx := context.Background()
	const account, org = "123456789012", "631475985395"
	sim, url := simtest.Start(t, &cloudsim.World{
		AWS: cloudsim.AWS{Accounts: []*cloudsim.Account{{ID: account, Regions: []string{"eu-west-1"}}}},
		GCP: cloudsim.GCP{Organizations: []*cloudsim.GCPOrganization{{ID: org, Domain: "acme.example"}}},
	}, cloudsim.Options{})
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIAWARDENSERVETEST", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_REGION": "eu-west-1", "AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "",
		"AWS_CONFIG_FILE": filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"),
	} {
		t.Setenv(k, v)
	}
	yaml := fmt.Sprintf("export:\n  every: 5m\n  securityhub: {region: eu-west-1, account: %q, endpoint: %q}\n  scc: {organization: %q, endpoint: %q}\n",
		account, url, org, url)
	cfg, err := config.Parse([]byte(yaml), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := storetest.Open(t, storetest.Backends(t)["sqlite"](t))
	o := RunOptions{Config: cfg, Store: st, Logger: slog.New(slog.DiscardHandler)}
	reg := prometheus.NewPedanticRegistry()
	met := metrics.New(reg)
	tasks, closeAll, err := o.exportTasks(ctx, met)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll()
	if len(tasks) != 1 || tasks[0].Name != "export" || tasks[0].Every != 5*time.Minute {
		t.Fatalf("tasks: %+v", tasks)
	}
	run := tasks[0].Run

	if err := run(ctx, time.Now()); err == nil {
		t.Fatal("a run before any read succeeded")
	} else if _, later := daemon.IsLater(err); !later {
		t.Fatalf("a run before any read: %v, want Later", err)
	}
	if n := sim.CallsTo("securityhub") + sim.CallsTo("securitycenter"); n != 0 {
		t.Fatalf("%d calls before any read", n)
	}

	now := time.Now().UTC()
	mk := func(policy, typ, res string) findings.Finding {
		return findings.Finding{Policy: policy, Title: policy, Severity: findings.High, Resource: res, ResourceType: typ,
			Fingerprint: findings.Fingerprint(policy, account, res, ""), Status: findings.StatusOpen}
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		if err := state.PutScope(ctx, tx, state.Scope{Scope: snapshot.Scope{ID: "aws/" + account + "/iam", Status: snapshot.ScopeOK}, ReadAt: now}); err != nil {
			return err
		}
		for _, f := range []findings.Finding{
			mk("WARDEN-AWS-IAM-001", "aws.iam.user", "arn:aws:iam::"+account+":user/alice"),
			mk("WARDEN-GCP-NET-001", "gcp.compute.firewall", "//compute.googleapis.com/projects/p/global/firewalls/ssh"),
		} {
			if err := state.PutFinding(ctx, tx, state.Finding{Finding: f, Status: findings.StatusOpen, OpenedAt: now, SeenAt: now}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := len(sim.SecurityHubFindings(account, "eu-west-1")); n != 1 {
		t.Errorf("Security Hub holds %d findings, want the AWS one", n)
	}
	if n := len(sim.SCCFindings("")); n != 1 {
		t.Errorf("Security Command Center holds %d findings, want the GCP one", n)
	}
	if got := exported(t, reg); got["securityhub/sent"] != 1 || got["scc/sent"] != 1 || got["securityhub/refused"] != 0 {
		t.Errorf("warden_findings_exported_total: %v", got)
	}
	sim.ResetCalls()
	if err := run(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if n := sim.CallsTo("securityhub") + sim.CallsTo("securitycenter"); n != 0 {
		t.Errorf("a run with nothing changed made %d calls", n)
	}
}

// exported reads warden_findings_exported_total from reg, by "sink/outcome".
func exported(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetName() != "warden_findings_exported_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out[l["sink"]+"/"+l["outcome"]] = m.GetCounter().GetValue()
		}
	}
	return out
}
