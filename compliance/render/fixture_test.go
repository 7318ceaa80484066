package render_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/snapshot"
)

// frameworkIDs are the six embedded frameworks; every format is checked on each.
var frameworkIDs = []string{"cis-aws-3.0", "cis-gcp-2.0", "iso-27001-2022", "nist-800-53-r5", "pci-dss-4.0", "soc2"}

// acmePosture is the built-in pack's scan of the acme organisation, made once for every
// test: what Evaluate needs, as the report command derives it from a scan (see
// compliance/pack_test.go), with by hand what the fixture lacks — a second failed scope,
// a waived finding, a waiver that expired, and when findings were first seen.
var acmePosture = sync.OnceValues(func() (acmeScan, error) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		return acmeScan{}, err
	}
	path := filepath.Join("..", "..", "fixtures", "acme", "snapshot.json")
	f, err := os.Open(path)
	if err != nil {
		return acmeScan{}, err
	}
	defer f.Close()
	res, err := e.Scan(ctx, snapshot.NewReader(f, path), engine.Options{})
	if err != nil {
		return acmeScan{}, err
	}
	// A TLS endpoint that did not answer: its scope failed, and the TLS policies could not
	// judge it.
	res.Header.Scopes = append(res.Header.Scopes, snapshot.Scope{ID: "tls/intranet.acme.example:443", Provider: "tls",
		Status: snapshot.ScopeFailed, Error: "dial tcp 10.20.0.14:443: i/o timeout"})

	at := res.Now
	in := compliance.Input{At: at, Policies: map[string]compliance.PolicyRun{}, Settings: map[string]any{}}
	for _, s := range e.SettingsSchema() {
		in.Settings[s.Name] = s.Default
	}
	for _, p := range e.Policies() {
		var run compliance.PolicyRun
		for _, typ := range p.ResourceTypes {
			run.Resources += res.ByType[typ]
			provider, rest, _ := strings.Cut(typ, ".")
			service, _, _ := strings.Cut(rest, ".")
			for _, s := range res.Header.Scopes {
				if !s.Complete() && s.Provider == provider && (s.Service == "" || s.Service == service) && !slices.Contains(run.FailedScopes, s.ID) {
					run.FailedScopes = append(run.FailedScopes, s.ID)
				}
			}
		}
		for _, ee := range res.EvalErrors {
			if ee.Policy == p.ID || ee.Policy == "" {
				run.Errors++
			}
		}
		in.Policies[p.ID] = run
	}
	fs := slices.Clone(res.Findings)
	waived, expired := false, false
	for i := range fs {
		f := &fs[i]
		f.FirstSeen = at.Add(-time.Duration(6+24*(i%9)) * time.Hour)
		switch {
		case !waived && f.Policy == "WARDEN-AWS-NET-001" && strings.HasSuffix(f.Key, "/0.0.0.0/0"):
			waived = true
			f.Status = findings.StatusWaived
			// A leading - is what a spreadsheet would read as a formula: the CSV guards it.
			f.Waiver = &findings.WaiverRef{Owner: "alice@acme.example", Reason: "-- bastion host, reachable only through the VPN <ticket SEC-42>",
				Expires: at.AddDate(0, 3, 0)}
		case !expired && strings.HasPrefix(f.Policy, "WARDEN-GCP-NET-"):
			expired = true
			f.Status = findings.StatusWaived
			f.Waiver = &findings.WaiverRef{Owner: "bob@acme.example", Reason: "legacy rule, removed with the data migration", Expires: at.AddDate(0, 0, -10)}
		}
	}
	if !waived || !expired {
		return acmeScan{}, errFixture
	}
	// A finding of an earlier scan in the scope that failed this time: carried over as
	// unknown, neither confirmed nor resolved.
	for _, f := range fs {
		if f.Policy == "WARDEN-AWS-NET-001" && f.Account == "333333333333" {
			f.Resource = "arn:aws:ec2:eu-central-1:333333333333:security-group/sg-0c0ffee0c0ffee000"
			f.Region, f.Scope, f.Status = "eu-central-1", "aws/333333333333/ec2/eu-central-1", findings.StatusUnknown
			f.Key = f.Resource + "#ingress/tcp/22-22/0.0.0.0/0"
			f.Message = "security group ops-jump (sg-0c0ffee0c0ffee000) allows tcp 22 from 0.0.0.0/0 (every IPv4 address): SSH (22) is open to the internet"
			f.Fingerprint = findings.Fingerprint(f.Policy, f.Account, f.Resource, f.Key)
			f.FirstSeen = at.AddDate(0, 0, -12)
			fs = append(fs, f)
			break
		}
	}
	in.Findings = fs
	return acmeScan{in: in, header: res.Header, resources: res.Resources, policies: len(e.Policies())}, nil
})

type acmeScan struct {
	in        compliance.Input
	header    snapshot.Header
	resources int
	policies  int
}

var errFixture = errors.New("the acme fixture no longer has the findings the test waives: pick others")

// acmeDocument is the report of one framework over acme, with everything around it that
// a Document carries: fixes with audit entries, a trend, a checkpoint, the failed scopes.
// Times are fixed, so that the golden files are stable.
func acmeDocument(t testing.TB, id string) *compliance.Document {
	t.Helper()
	scan, err := acmePosture()
	if err != nil {
		t.Fatal(err)
	}
	fw, err := compliance.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	rep := compliance.Evaluate(fw, scan.in)
	at := rep.At
	d := &compliance.Document{
		Report:    rep,
		Generated: at.Add(2 * time.Hour),
		Tool:      "v0.11.0-test",
		Source: compliance.Source{ScanID: 42, Snapshot: "fixtures/acme/snapshot.json", CollectedAt: scan.header.CollectedAt,
			Resources: scan.resources, Policies: scan.policies},
		Checkpoint: &compliance.Checkpoint{Size: 1337, Root: "9j2kQ0yXr8bU7f3mE1tA5cVwZ4nH6pLsD0oGiJqRuYk=", At: at.Add(-30 * time.Minute),
			Note: "warden.acme.example/audit\n1337\n9j2kQ0yXr8bU7f3mE1tA5cVwZ4nH6pLsD0oGiJqRuYk=\n\n— warden.acme.example/audit x9Jp2w3Rk0n1ZJ8VqYbHc4dE5fG6hI7jK8lM9nO0pQ1rS2tU3vW4xY5zA6bC7dE8fG9hI0jK1lM2nO3pQ4rS5tU6vA==\n"},
		Convergence: compliance.Convergence{Resolved: 17, MedianOpen: 30 * time.Hour, P90Open: 6*24*time.Hour + 5*time.Hour,
			Open: len(rep.Controls[0].Failing), OldestOpen: 12 * 24 * time.Hour},
	}
	for _, s := range scan.header.Scopes {
		d.Scopes = append(d.Scopes, compliance.Scope{ID: s.ID, Status: s.Status, Error: s.Error, Resources: s.Resources})
	}
	slices.SortStableFunc(d.Scopes, func(a, b compliance.Scope) int { return boolCmp(a.Status == "ok", b.Status == "ok") })
	d.Convergence.Open = len(d.OpenFindings())

	// Two fixes on failing findings of the framework: one verified, one rolled back.
	seq := int64(1201)
	for _, c := range rep.Controls {
		if len(d.Fixes) == 2 {
			break
		}
		i := slices.IndexFunc(c.Failing, func(f findings.Finding) bool {
			return f.Remediation.Action != "" && f.Remediation.Action != "manual" &&
				!slices.ContainsFunc(d.Fixes, func(fix compliance.Fix) bool { return fix.Policy == f.Policy })
		})
		if i < 0 {
			continue
		}
		f := c.Failing[i]
		var controls []string
		for _, cc := range rep.Controls {
			if slices.Contains(cc.Policies, f.Policy) {
				controls = append(controls, cc.ID)
			}
		}
		fix := compliance.Fix{Action: f.Remediation.Action, Policy: f.Policy, Controls: controls, Remediator: "builtin/" + f.Remediation.Action,
			Target: f.Resource, Part: f.Target, State: "verified", At: at.Add(-time.Duration(20+len(d.Fixes)*30) * time.Hour),
			Actor: "approver:carol@acme.example", AuditSeqs: []int64{seq, seq + 1, seq + 2}}
		if len(d.Fixes) == 1 {
			fix.State, fix.Actor, fix.AuditSeqs = "rolled_back", "warden (auto)", []int64{seq, seq + 1, seq + 2, seq + 3}
		}
		d.Fixes = append(d.Fixes, fix)
		seq += 10
	}

	// The trend: three earlier scans, then this report's. acme fails every control warden
	// decides, so the history is of a posture that got worse: earlier scans passed more.
	open := map[string]int{}
	for _, f := range d.OpenFindings() {
		if f.Status == findings.StatusOpen {
			open[f.Severity.String()]++
		}
	}
	for i := 3; i >= 0; i-- {
		s := rep.Score
		moved := min(2*i, s.Fail)
		s.Pass, s.Fail = s.Pass+moved, s.Fail-moved
		s.Percent = nil
		if n := s.Pass + s.Fail; n > 0 {
			p := 100 * float64(s.Pass) / float64(n)
			s.Percent = &p
		}
		o := map[string]int{}
		for k, v := range open {
			o[k] = max(v-i, 0)
		}
		d.Trend = append(d.Trend, compliance.TrendPoint{At: at.AddDate(0, 0, -7*i), ScanID: 42 - int64(3*i), Score: s, Open: o})
	}
	return d
}

func boolCmp(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}
