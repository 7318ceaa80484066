package permissions

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	securitycenter "cloud.google.com/go/securitycenter/apiv1"
	"github.com/aws/aws-sdk-go-v2/service/securityhub"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/publish"
	"github.com/warden-sec/warden/publish/scc"
	publishsh "github.com/warden-sec/warden/publish/securityhub"
	"github.com/warden-sec/warden/store"
)

// The exporter documents grant exactly what the export of findings calls. Both sinks
// take findings through their life against the simulator, through the official clients:
// new, then one waived (Security Hub's workflow, SCC's mute), then that one gone
// (archived, inactive). Each call the simulator served is mapped to its IAM action or
// GCP permission, which the exporter documents must grant; every permission they grant
// must have been called.
func TestLeastPrivilege_exporter(t *testing.T) {
	ctx := context.Background()
	const org, account = "123", "123456789012"
	rec := &callRecorder{}
	w := &cloudsim.World{GCP: cloudsim.GCP{Organizations: []*cloudsim.GCPOrganization{{ID: org, Domain: "acme.example"}}}}
	sim, url := simtest.Start(t, w, cloudsim.Options{Logger: slog.New(rec)})
	hub, err := publishsh.New(securityhub.NewFromConfig(simtest.AWSConfig(url)), publishsh.Options{Region: "us-east-1", Account: account})
	if err != nil {
		t.Fatal(err)
	}
	rest, _, err := gcpapi.ClientOptions(url)
	if err != nil {
		t.Fatal(err)
	}
	client, err := securitycenter.NewRESTClient(ctx, rest...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	center, err := scc.New(client, scc.Options{Organization: org, All: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	finding := func(n int, status string) publish.Item {
		res := fmt.Sprintf("arn:aws:ec2:us-east-1:%s:security-group/sg-%04d", account, n)
		return publish.Item{Finding: findings.Finding{Policy: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet",
			Severity: findings.High, Resource: res, ResourceType: "aws.ec2.security_group", Account: account, Region: "us-east-1",
			Scope: "aws/" + account + "/ec2/us-east-1", Message: fmt.Sprintf("sg-%04d opens SSH to 0.0.0.0/0", n),
			Fingerprint: findings.Fingerprint("WARDEN-AWS-NET-001", account, res, "22"), Status: status,
			FirstSeen: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}}
	}
	runs := [][]publish.Item{
		{finding(1, findings.StatusOpen), finding(2, findings.StatusOpen)},
		{finding(1, findings.StatusWaived), finding(2, findings.StatusOpen)},
		{finding(2, findings.StatusOpen)},
	}
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	for i, items := range runs {
		for _, sink := range []publish.Sink{hub, center} {
			res, err := publish.Run(ctx, st, sink, items, now.Add(time.Duration(i)*time.Hour))
			if err != nil {
				t.Fatalf("run %d, %s: %v", i+1, sink.Name(), err)
			}
			if len(res.Refused) > 0 || res.Sent == 0 {
				t.Fatalf("run %d: %s", i+1, res)
			}
		}
	}
	calls := rec.take()
	if err := sameOperations(calls, sim.Calls()); err != nil {
		t.Fatal(err)
	}
	granted, used := ExporterPolicy().Actions(), map[string]bool{}
	for _, c := range calls {
		if !awsServices[c.Service] {
			continue
		}
		if !slices.Contains(granted, c.action()) {
			t.Errorf("the export called %s: the exporter policy does not grant it", c.action())
		}
		used[c.action()] = true
	}
	checkUsed(t, "AWS exporter policy", granted, used, nil)
	checkGCP(t, "GCP exporter role", GCPExporterRole().IncludedPermissions, calls, nil)
}
