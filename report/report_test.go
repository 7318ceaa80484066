package report_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/internal/golden"
	"github.com/warden-sec/warden/report"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
)

// sample is a scan's result with a finding of each status a report shows, an expired
// waiver, an unread scope and a failed evaluation; its summary counts them as scan.Run
// would.
func sample() *scan.Result {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fw := map[string][]string{"cis-aws-3.0": {"5.2"}, "nist-800-53-r5": {"SC-7"}}
	return &scan.Result{
		Scan: scan.Info{ID: 7, Snapshot: "fixtures/acme/snapshot.json", Source: "test", CollectedAt: at, EvaluatedAt: at,
			StartedAt: at.Add(time.Hour), DurationMS: 42, Warden: "v0.0.0-test", Policies: 3, Resources: 10},
		Findings: []findings.Finding{
			{Policy: "WARDEN-AWS-IAM-012", Title: "Root user has no MFA", Severity: findings.Critical, Resource: "arn:aws:iam::111111111111:root",
				ResourceType: "aws.iam.root_user", Account: "111111111111", Region: "global", Message: "root user of 111111111111 has no MFA",
				Fingerprint: "aaaa", Remediation: findings.Remediation{Action: "manual", Risk: findings.RiskNone}, Status: findings.StatusOpen},
			{Policy: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet", Severity: findings.High,
				Resource: "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1", ResourceType: "aws.ec2.security_group",
				Account: "111111111111", Region: "eu-west-1", Message: "sg-1 opens SSH to 0.0.0.0/0", Fingerprint: "bbbb",
				Key: "r1", Target: "r1", Remediation: findings.Remediation{Action: "aws.ec2.revoke_ingress", Risk: findings.RiskMedium}, Frameworks: fw,
				Details: map[string]any{"cidr": "0.0.0.0/0"}, Status: findings.StatusOpen},
			{Policy: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet", Severity: findings.High,
				Resource: "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-bastion", ResourceType: "aws.ec2.security_group",
				Account: "111111111111", Region: "eu-west-1", Message: "sg-bastion opens SSH to 0.0.0.0/0", Fingerprint: "cccc",
				Remediation: findings.Remediation{Action: "aws.ec2.revoke_ingress", Risk: findings.RiskMedium}, Frameworks: fw, Status: findings.StatusWaived,
				Waiver: &findings.WaiverRef{Owner: "alice@acme.example", Reason: "bastion", Expires: at.AddDate(0, 3, 0)}},
		},
		ExpiredWaivers: []scan.ExpiredWaiver{{Policy: "WARDEN-CERT-*", Resource: "tls://old:443", Owner: "bob", Reason: "legacy",
			Expired: at.AddDate(0, -1, 0), File: "waivers.yaml", Line: 8, Findings: 1}},
		IncompleteScopes: []snapshot.Scope{{ID: "aws/333333333333/ec2/us-east-1", Status: snapshot.ScopeFailed, Error: "AccessDenied"}},
		EvalErrors:       []findings.EvalError{{Policy: "X-1", Resource: "r", Error: "conflict"}},
		Rules: []scan.Rule{
			{ID: "WARDEN-AWS-IAM-012", Title: "Root user has no MFA", Description: "Root without MFA.", Severity: findings.Critical},
			{ID: "WARDEN-AWS-NET-001", Title: "Security group opens SSH to the internet", Description: "SSH open.", Severity: findings.High, Frameworks: fw},
		},
		Summary: scan.Summary{Findings: 2, BySeverity: map[string]int{"critical": 1, "high": 1, "medium": 0, "low": 0, "info": 0},
			Waived: 1, ExpiredWaivers: 1, Resources: 10, ResourcesByType: map[string]int{"aws.iam.root_user": 1, "aws.ec2.security_group": 9},
			Policies: 3, PoliciesFailing: 2, IncompleteScopes: 1, EvalErrors: 1, Incomplete: true},
	}
}

func TestWriters_golden(t *testing.T) {
	for _, tc := range []struct {
		format string
		color  bool
		file   string
	}{
		{"table", false, "table.golden"},
		{"table", true, "table-color.golden"},
		{"json", false, "report.json.golden"},
		{"sarif", false, "report.sarif.golden"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			w, err := report.New(tc.format, tc.color)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := w.Write(&buf, sample()); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", tc.file)
			golden.Check(t, path, buf.Bytes(), "go test ./report -update")
		})
	}
}

func TestJSON_contract(t *testing.T) {
	var buf bytes.Buffer
	if err := (report.JSON{}).Write(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []map[string]any `json:"findings"`
		Summary  map[string]any   `json:"summary"`
		Scan     map[string]any   `json:"scan"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"policy", "severity", "resource", "resource_type", "account", "region", "message", "fingerprint", "remediation", "status"} {
		if _, ok := doc.Findings[1][key]; !ok {
			t.Errorf("finding lacks %q", key)
		}
	}
	if doc.Findings[1]["frameworks"] == nil {
		t.Error("finding lacks frameworks")
	}
	if rem := doc.Findings[1]["remediation"].(map[string]any); rem["action"] != "aws.ec2.revoke_ingress" || rem["risk"] != "medium" {
		t.Errorf("remediation = %v", rem)
	}
	if doc.Summary["findings"] != 2.0 || doc.Summary["waived"] != 1.0 {
		t.Errorf("summary = %v", doc.Summary)
	}
	if doc.Scan["snapshot"] != "fixtures/acme/snapshot.json" {
		t.Errorf("scan = %v", doc.Scan)
	}
}

func TestNew_unknownFormat(t *testing.T) {
	if _, err := report.New("xml", false); err == nil {
		t.Error("unknown format accepted")
	}
}
