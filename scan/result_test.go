package scan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/waivers"
)

// The exit code contract: 0 clean, 1 open findings at or above --fail-on, 2 when a
// policy evaluation failed (whatever was found) or a scope went unread and nothing at or
// above --fail-on was found among the rest.
func TestVerdict_exitCodes(t *testing.T) {
	const at = "2026-11-30T12:00:00Z"
	tomorrow := time.Now().AddDate(0, 0, 1).UTC().Format("2006-01-02")
	yesterday := time.Now().AddDate(0, 0, -1).UTC().Format("2006-01-02")
	waiver := func(expires string) string {
		return "waivers:\n  - policy: TEST-ROOT-001\n    resource: \"arn:aws:iam::1*:root\"\n    reason: r\n    owner: o@x\n    expires: " + expires + "\n"
	}
	eng := testEngine(t)
	tests := []struct {
		name       string
		snapshot   string
		failOn     findings.Severity
		waivers    string
		want       int
		wantReason string
	}{
		{"open finding at the threshold", snap(at, nil, root{"111111111111", false, 0}), findings.High, "", scan.ExitFindings, ""},
		{"finding below the threshold", snap(at, nil, root{"111111111111", true, 0}), findings.High, "", scan.ExitClean, ""},
		{"the same finding with the threshold at low", snap(at, nil, root{"111111111111", true, 0}), findings.Low, "", scan.ExitFindings, ""},
		{"a waived finding does not fail", snap(at, nil, root{"111111111111", false, 0}), findings.High, waiver(tomorrow), scan.ExitClean, ""},
		{"an expired waiver suppresses nothing", snap(at, nil, root{"111111111111", false, 0}), findings.High, waiver(yesterday), scan.ExitFindings, ""},
		{"a failed evaluation is incomplete whatever was found",
			snap(at, nil, root{"111111111111", false, 1}, root{"222222222222", false, 0}), findings.Low, "", scan.ExitIncomplete, "1 policy evaluation failed"},
		{"an unread scope with nothing else found is incomplete",
			snap(at, []string{"222222222222"}, root{"111111111111", true, 0}), findings.High, "", scan.ExitIncomplete, "1 scope could not be read in full"},
		{"an unread scope does not hide findings at the threshold",
			snap(at, []string{"222222222222"}, root{"111111111111", false, 0}), findings.High, "", scan.ExitFindings, ""},
		{"a snapshot with no resources is clean", snap(at, nil), findings.Info, "", scan.ExitClean, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ws *waivers.Set
			if tc.waivers != "" {
				ws = parseWaivers(t, tc.waivers)
			}
			res, err := scan.Run(context.Background(), scan.Request{Source: scan.Reader(strings.NewReader(tc.snapshot), "snap.json"), Engine: eng, Waivers: ws})
			if err != nil {
				t.Fatal(err)
			}
			v := res.Verdict(tc.failOn)
			if v.Code != tc.want || res.ExitCode(tc.failOn) != tc.want {
				t.Errorf("verdict %+v, want exit %d; summary %+v", v, tc.want, res.Summary)
			}
			if !strings.Contains(v.Reason, tc.wantReason) || (tc.wantReason == "") != (v.Reason == "") {
				t.Errorf("reason %q, want one containing %q", v.Reason, tc.wantReason)
			}
		})
	}
}

// The acme example organisation: every built-in policy finds something, one scope
// (acme-security's EC2 in eu-central-1) was denied, and the findings fail any threshold.
func TestRun_acmeFixture(t *testing.T) {
	eng := builtinEngine(t)
	res, err := scan.Run(context.Background(), scan.Request{Source: scan.File("../fixtures/acme/snapshot.json"), Engine: eng, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	s := res.Summary
	if s.Resources != 281 || s.Findings != 280 || s.BySeverity["critical"] != 18 || s.PoliciesFailing != 119 || s.Policies != 119 || s.Incomplete {
		t.Errorf("summary %+v: want 281 resources, 280 findings (18 critical) of all 119 policies, complete", s)
	}
	if len(res.IncompleteScopes) != 1 || res.IncompleteScopes[0].ID != "aws/333333333333/ec2/eu-central-1" || s.IncompleteScopes != 1 {
		t.Errorf("incomplete scopes %+v: want acme-security's EC2 in eu-central-1", res.IncompleteScopes)
	}
	want := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	if !res.Scan.CollectedAt.Equal(want) || !res.Scan.EvaluatedAt.Equal(want) || res.Scan.Snapshot != "../fixtures/acme/snapshot.json" ||
		res.Scan.Warden != "test" || res.Scan.ID != 0 || len(res.Header.Accounts) != 5 || res.Collection != nil {
		t.Errorf("scan info %+v, %d accounts", res.Scan, len(res.Header.Accounts))
	}
	if len(res.Rules) != 119 || len(res.Open()) != 280 {
		t.Errorf("%d rules, %d open findings", len(res.Rules), len(res.Open()))
	}
	for _, failOn := range []findings.Severity{findings.Critical, findings.Info} {
		if code := res.ExitCode(failOn); code != scan.ExitFindings {
			t.Errorf("exit code at --fail-on %s: %d, want 1", failOn, code)
		}
	}
}

// Expired waivers are reported with the findings they would still cover; active ones
// mark their findings waived, with the waiver's owner and reason.
func TestRun_waiversMarkFindingsAndReportExpiredOnes(t *testing.T) {
	tomorrow := time.Now().AddDate(0, 0, 1).UTC().Format("2006-01-02")
	yesterday := time.Now().AddDate(0, 0, -1).UTC().Format("2006-01-02")
	ws := parseWaivers(t, "waivers:\n"+
		"  - policy: TEST-ROOT-001\n    resource: \"arn:aws:iam::111111111111:root\"\n    reason: break glass\n    owner: sec@x\n    expires: "+tomorrow+"\n"+
		"  - policy: TEST-ROOT-001\n    resource: \"arn:aws:iam::222222222222:root\"\n    reason: old\n    owner: ops@x\n    expires: "+yesterday+"\n"+
		"  - policy: TEST-LOW-001\n    resource: \"arn:aws:iam::9*:root\"\n    reason: gone\n    owner: ops@x\n    expires: "+yesterday+"\n")
	res, err := scan.Run(context.Background(), scan.Request{Engine: testEngine(t), Waivers: ws,
		Source: scan.Reader(strings.NewReader(snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0}, root{"222222222222", false, 0})), "s")})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]findings.Finding{}
	for _, f := range res.Findings {
		status[f.Resource] = f
	}
	if f := status["arn:aws:iam::111111111111:root"]; f.Status != findings.StatusWaived || f.Waiver == nil || f.Waiver.Owner != "sec@x" {
		t.Errorf("finding under an active waiver: %+v", f)
	}
	if f := status["arn:aws:iam::222222222222:root"]; f.Status != findings.StatusOpen {
		t.Errorf("finding under an expired waiver: %+v", f)
	}
	if len(res.ExpiredWaivers) != 2 || res.ExpiredWaivers[0].Findings != 1 || res.ExpiredWaivers[1].Findings != 0 || res.ExpiredWaivers[0].Line == 0 {
		t.Errorf("expired waivers %+v: want the two expired ones, covering 1 and 0 findings, with their lines", res.ExpiredWaivers)
	}
	if res.Summary.Waived != 1 || res.Summary.Findings != 1 || res.Summary.ExpiredWaivers != 2 {
		t.Errorf("summary %+v", res.Summary)
	}
}

// A waiver's expiry is judged against today, not against an old snapshot's collected_at:
// a waiver that has run out no longer suppresses, however old the snapshot.
func TestRun_waiverExpiryIsJudgedAtTheLaterOfTodayAndCollection(t *testing.T) {
	yesterday := time.Now().Add(-24 * time.Hour).UTC().Format("2006-01-02")
	set := parseWaivers(t, "waivers:\n  - policy: TEST-ROOT-001\n    resource: \"arn:aws:iam::*:root\"\n    reason: r\n    owner: o@x\n    expires: "+yesterday+"\n")
	old := time.Now().AddDate(0, -1, 0).UTC().Format(time.RFC3339)
	res, err := scan.Run(context.Background(), scan.Request{Source: scan.Reader(strings.NewReader(snap(old, nil, root{"111111111111", false, 0})), "old"),
		Engine: testEngine(t), Waivers: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || res.Findings[0].Status != findings.StatusOpen || len(res.ExpiredWaivers) != 1 {
		t.Fatalf("findings %+v, expired waivers %+v: want the finding open and the waiver listed as expired", res.Findings, res.ExpiredWaivers)
	}
}

// A waiver naming no loaded policy is refused before the snapshot is read: a typo must
// not waive nothing in silence, nor cost a whole collection first.
func TestRun_refusesAWaiverForAnUnknownPolicyBeforeReading(t *testing.T) {
	set := parseWaivers(t, "waivers:\n  - policy: TEST-ROTO-001\n    resource: \"arn:aws:iam::*:root\"\n    reason: r\n    owner: o@x\n    expires: 2099-01-01\n")
	src := &countingReader{r: strings.NewReader(snap("2026-11-30T12:00:00Z", nil, root{"1", false, 0}))}
	_, err := scan.Run(context.Background(), scan.Request{Source: scan.Reader(src, "s"), Engine: testEngine(t), Waivers: set})
	if err == nil || !strings.Contains(err.Error(), "TEST-ROTO-001") || !strings.Contains(err.Error(), "TEST-ROOT-001") {
		t.Errorf("error %v: want one naming the unknown policy and suggesting TEST-ROOT-001", err)
	}
	if src.reads != 0 {
		t.Errorf("the snapshot was read %d times before the waivers were refused", src.reads)
	}
}

type countingReader struct {
	r     *strings.Reader
	reads int
}

func (c *countingReader) Read(p []byte) (int, error) { c.reads++; return c.r.Read(p) }
