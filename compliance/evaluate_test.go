package compliance

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/waivers"
)

// testFramework exercises every kind of control Evaluate knows.
const testFramework = `id: test-1
name: Test framework
version: "1"
publisher: warden tests
source: evaluate_test.go
families:
  - {id: "1", title: One}
  - {id: "1.1", title: Part of one, parent: "1"}
  - {id: "2", title: Two}
controls:
  - {id: "1.1.1", title: Automated by two policies, family: "1.1", assessment: automated, policies: [P-A, P-B]}
  - id: "1.1.2"
    title: Relies on a threshold
    family: "1.1"
    assessment: automated
    policies: [P-C]
    requires_config:
      days: {max: 45}
  - {id: "1.2", title: Automatable but unchecked, family: "1", assessment: automated}
  - {id: "2.1", title: Assessed by a person, family: "2", assessment: manual}
  - {id: "2.2", title: Manual with evidence, family: "2", assessment: manual, policies: [P-A]}
  - id: "2.3"
    title: IPv4 only
    family: "2"
    assessment: automated
    policies: [P-N]
    key_match:
      P-N: '/0\.0\.0\.0/0$'
`

var at = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func mustParse(t testing.TB, data string) *Framework {
	t.Helper()
	f, err := Parse("test.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func finding(policy, resource, key, status string) findings.Finding {
	return findings.Finding{Policy: policy, Resource: resource, Key: key, Status: status, Account: "111111111111",
		Severity: findings.High, Message: policy + " on " + resource, Fingerprint: findings.Fingerprint(policy, "111111111111", resource, key)}
}

func waived(f findings.Finding, expires time.Time) findings.Finding {
	f.Status = findings.StatusWaived
	f.Waiver = &findings.WaiverRef{Owner: "alice@acme.example", Reason: "bastion", Expires: expires}
	return f
}

// ran says every policy of the test framework ran on a few resources.
func ran() map[string]PolicyRun {
	return map[string]PolicyRun{"P-A": {Resources: 3}, "P-B": {Resources: 2}, "P-C": {Resources: 4}, "P-N": {Resources: 5}}
}

func with(runs map[string]PolicyRun, id string, r PolicyRun) map[string]PolicyRun {
	runs[id] = r
	return runs
}

func without(runs map[string]PolicyRun, id string) map[string]PolicyRun {
	delete(runs, id)
	return runs
}

func TestEvaluate_statusOfEachControl(t *testing.T) {
	fw := mustParse(t, testFramework)
	sg := "arn:aws:ec2:eu-west-1:111111111111:security-group/sg-1"
	ok := map[string]any{"days": 45.0}
	tests := []struct {
		name     string
		control  string
		in       Input
		want     Status
		reason   string
		failing  int
		waived   int
		unknown  int
		policies map[string][3]int // policy → failing, waived, unknown counted on its run
	}{
		{name: "pass: every policy ran and found nothing", control: "1.1.1",
			in: Input{Policies: ran()}, want: StatusPass, reason: "nothing open: P-A on 3 resources, P-B on 2"},
		{name: "fail: an open finding", control: "1.1.1",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-B", "r1", "k", findings.StatusOpen)}},
			want: StatusFail, reason: "1 open finding of P-B on 1 resource", failing: 1, policies: map[string][3]int{"P-B": {1, 0, 0}}},
		{name: "fail: a finding of no known status counts as open", control: "1.1.1",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-A", "r1", "k", "")}},
			want: StatusFail, failing: 1},
		{name: "fail: findings on two resources", control: "1.1.1",
			in: Input{Policies: ran(), Findings: []findings.Finding{
				finding("P-A", "r1", "k1", findings.StatusOpen), finding("P-A", "r1", "k2", findings.StatusOpen), finding("P-B", "r2", "k", findings.StatusOpen)}},
			want: StatusFail, reason: "3 open findings of P-A, P-B on 2 resources", failing: 3},
		{name: "pass: another policy's finding does not count", control: "1.1.1",
			in: Input{Policies: ran(), Findings: []findings.Finding{finding("P-C", "r1", "k", findings.StatusOpen)}}, want: StatusPass},
		{name: "pass: a waived finding is evidence, not a failure", control: "1.1.1",
			in:   Input{At: at, Policies: ran(), Findings: []findings.Finding{waived(finding("P-A", "r1", "k", ""), at.Add(time.Hour))}},
			want: StatusPass, waived: 1, policies: map[string][3]int{"P-A": {0, 1, 0}}},
		{name: "fail: the waiver had expired at the report's time", control: "1.1.1",
			in:   Input{At: at, Policies: ran(), Findings: []findings.Finding{waived(finding("P-A", "r1", "k", ""), at)}},
			want: StatusFail, failing: 1},
		{name: "pass: a waiver of the set covers an open finding", control: "1.1.1",
			in: Input{At: at, Policies: ran(), Findings: []findings.Finding{finding("P-A", sg, "k", findings.StatusOpen)},
				Waivers: &waivers.Set{Waivers: []*waivers.Waiver{{Policy: "P-*", Resource: "arn:aws:ec2:*:security-group/sg-1", Owner: "bob", Reason: "lab", Expires: at.AddDate(0, 1, 0)}}}},
			want: StatusPass, waived: 1},
		{name: "fail: the set's waiver has expired", control: "1.1.1",
			in: Input{At: at, Policies: ran(), Findings: []findings.Finding{finding("P-A", sg, "k", findings.StatusOpen)},
				Waivers: &waivers.Set{Waivers: []*waivers.Waiver{{Policy: "P-A", Resource: sg, Owner: "bob", Reason: "lab", Expires: at}}}},
			want: StatusFail, failing: 1},
		{name: "unknown: a finding carried over unjudged", control: "1.1.1",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-A", "r1", "k", findings.StatusUnknown)}},
			want: StatusUnknown, reason: "P-A could not judge everything (1 finding carried over unjudged)", unknown: 1, policies: map[string][3]int{"P-A": {0, 0, 1}}},
		{name: "unknown: evaluations failed", control: "1.1.1",
			in: Input{Policies: with(ran(), "P-B", PolicyRun{Resources: 2, Errors: 2})}, want: StatusUnknown, reason: "P-B could not judge everything (2 evaluations failed)"},
		{name: "unknown: a scope of its resources failed", control: "1.1.1",
			in:   Input{Policies: with(ran(), "P-B", PolicyRun{Resources: 2, FailedScopes: []string{"aws/333333333333/ec2/eu-central-1"}})},
			want: StatusUnknown, reason: "scopes not read: aws/333333333333/ec2/eu-central-1"},
		{name: "fail beats unknown", control: "1.1.1",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-A", "r1", "k", findings.StatusUnknown), finding("P-B", "r2", "k", findings.StatusOpen)}},
			want: StatusFail, failing: 1, unknown: 1},
		{name: "not covered: a policy was not run", control: "1.1.1",
			in: Input{Policies: without(ran(), "P-B")}, want: StatusNotCovered, reason: "P-B was not run"},
		{name: "not covered: no policy ran at all", control: "1.1.1",
			in: Input{}, want: StatusNotCovered, reason: "P-A was not run; P-B was not run"},
		{name: "not covered: nothing to check in the posture", control: "1.1.1",
			in:   Input{Policies: with(with(ran(), "P-A", PolicyRun{}), "P-B", PolicyRun{})},
			want: StatusNotCovered, reason: "P-A, P-B found no resource to check in the posture"},
		{name: "pass: one policy with nothing to check, the other checked", control: "1.1.1",
			in: Input{Policies: with(ran(), "P-A", PolicyRun{})}, want: StatusPass, reason: "nothing open: P-A on 0 resources, P-B on 2"},
		{name: "pass: the threshold is within bounds", control: "1.1.2", in: Input{Policies: ran(), Settings: ok}, want: StatusPass},
		{name: "pass: a threshold as json.Number", control: "1.1.2",
			in: Input{Policies: ran(), Settings: map[string]any{"days": json.Number("30")}}, want: StatusPass},
		{name: "not covered: the threshold is looser than the framework's", control: "1.1.2",
			in:   Input{Policies: ran(), Settings: map[string]any{"days": 90}},
			want: StatusNotCovered, reason: "setting days is 90; a pass relies on it being at most 45"},
		{name: "not covered: the threshold is not known", control: "1.1.2",
			in: Input{Policies: ran()}, want: StatusNotCovered, reason: "setting days is not known"},
		{name: "not covered: the threshold is not a number", control: "1.1.2",
			in: Input{Policies: ran(), Settings: map[string]any{"days": "45"}}, want: StatusNotCovered, reason: "not a number"},
		{name: "fail: a finding fails even under a loose threshold", control: "1.1.2",
			in:   Input{Policies: ran(), Settings: map[string]any{"days": 90}, Findings: []findings.Finding{finding("P-C", "key", "k", findings.StatusOpen)}},
			want: StatusFail, failing: 1},
		{name: "unknown and not covered: every obstacle is named", control: "1.1.2",
			in:   Input{Policies: with(ran(), "P-C", PolicyRun{Resources: 4, Errors: 1}), Settings: map[string]any{"days": 90}},
			want: StatusUnknown, reason: "P-C could not judge everything (1 evaluation failed); setting days is 90"},
		{name: "not covered: automatable without a policy", control: "1.2",
			in: Input{Policies: ran()}, want: StatusNotCovered, reason: "no warden policy checks this control"},
		{name: "manual: no policy", control: "2.1", in: Input{Policies: ran()}, want: StatusManual, reason: "assessed by a person"},
		{name: "manual: its evidence is clean", control: "2.2",
			in: Input{Policies: ran()}, want: StatusManual, reason: "warden's checks found nothing open"},
		{name: "manual: unjudged evidence is said", control: "2.2",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-A", "r1", "k", findings.StatusUnknown)}},
			want: StatusManual, reason: "but P-A could not judge everything", unknown: 1},
		{name: "manual: a policy not run leaves it manual, and says so", control: "2.2", in: Input{}, want: StatusManual, reason: "but P-A was not run"},
		{name: "fail: its evidence fails it", control: "2.2",
			in: Input{Policies: ran(), Findings: []findings.Finding{finding("P-A", "r1", "k", findings.StatusOpen)}}, want: StatusFail, failing: 1},
		{name: "fail: key_match keeps the keys it is about", control: "2.3",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-N", sg, sg+"#ingress/tcp/22-22/0.0.0.0/0", findings.StatusOpen)}},
			want: StatusFail, failing: 1},
		{name: "pass: key_match drops the others", control: "2.3",
			in:   Input{Policies: ran(), Findings: []findings.Finding{finding("P-N", sg, sg+"#ingress/tcp/22-22/::/0", findings.StatusOpen)}},
			want: StatusPass, policies: map[string][3]int{"P-N": {0, 0, 0}}},
		{name: "unknown: key_match applies to unknown findings too", control: "2.3",
			in: Input{Policies: ran(), Findings: []findings.Finding{
				finding("P-N", sg, sg+"#ingress/tcp/22-22/::/0", findings.StatusUnknown),
				finding("P-N", sg, sg+"#ingress/tcp/3389-3389/0.0.0.0/0", findings.StatusUnknown)}},
			want: StatusUnknown, unknown: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Evaluate(fw, tt.in)
			var got *ControlResult
			for i := range rep.Controls {
				if rep.Controls[i].ID == tt.control {
					got = &rep.Controls[i]
				}
			}
			if got == nil {
				t.Fatalf("no result for control %s", tt.control)
			}
			if got.Status != tt.want || !strings.Contains(got.Reason, tt.reason) {
				t.Errorf("control %s = %s (%s); want %s with a reason containing %q", tt.control, got.Status, got.Reason, tt.want, tt.reason)
			}
			if len(got.Failing) != tt.failing || len(got.Waived) != tt.waived || len(got.Unknown) != tt.unknown {
				t.Errorf("evidence: %d failing, %d waived, %d unknown; want %d, %d, %d", len(got.Failing), len(got.Waived), len(got.Unknown), tt.failing, tt.waived, tt.unknown)
			}
			for _, f := range got.Failing {
				if f.Status != findings.StatusOpen {
					t.Errorf("failing finding %s has status %q, want open", f.Fingerprint, f.Status)
				}
			}
			for _, f := range got.Waived {
				if f.Status != findings.StatusWaived || f.Waiver == nil || f.Waiver.Owner == "" || f.Waiver.Reason == "" || f.Waiver.Expires.IsZero() {
					t.Errorf("waived finding %s lacks its waiver: %+v", f.Fingerprint, f.Waiver)
				}
			}
			for id, want := range tt.policies {
				found := false
				for _, r := range got.Runs {
					if r.Policy == id {
						found = true
						if c := [3]int{r.Failing, r.Waived, r.Unknown}; c != want {
							t.Errorf("run of %s counts %v (failing, waived, unknown), want %v", id, c, want)
						}
					}
				}
				if !found {
					t.Errorf("no run of %s among %+v", id, got.Runs)
				}
			}
		})
	}
}

// TestEvaluate_expiredWaiverIsKept: a finding whose waiver ran out fails the control and
// still carries the waiver, so that the report can say whose acceptance lapsed.
func TestEvaluate_expiredWaiverIsKept(t *testing.T) {
	fw := mustParse(t, testFramework)
	in := Input{At: at, Policies: ran(), Findings: []findings.Finding{waived(finding("P-A", "r1", "k", ""), at.Add(-time.Hour))}}
	c := Evaluate(fw, in).Controls[0]
	if c.Status != StatusFail || len(c.Failing) != 1 || c.Failing[0].Waiver == nil || c.Failing[0].Waiver.Owner != "alice@acme.example" {
		t.Fatalf("control = %s, failing %+v", c.Status, c.Failing)
	}
	if in.Findings[0].Status != findings.StatusWaived {
		t.Error("Evaluate changed its input")
	}
}

func TestEvaluate_scoresFamiliesWithTheirParts(t *testing.T) {
	fw := mustParse(t, testFramework)
	// 1.1.1 fails, 1.1.2 passes, 1.2 is not covered, 2.1 and 2.2 manual, 2.3 unknown.
	rep := Evaluate(fw, Input{
		Policies: with(ran(), "P-N", PolicyRun{Resources: 5, FailedScopes: []string{"s"}}),
		Settings: map[string]any{"days": 30},
		Findings: []findings.Finding{finding("P-B", "r", "k", findings.StatusOpen)},
	})
	statuses := map[string]Status{}
	for _, c := range rep.Controls {
		statuses[c.ID] = c.Status
	}
	want := map[string]Status{"1.1.1": StatusFail, "1.1.2": StatusPass, "1.2": StatusNotCovered, "2.1": StatusManual, "2.2": StatusManual, "2.3": StatusUnknown}
	for id, s := range want {
		if statuses[id] != s {
			t.Errorf("control %s = %s, want %s", id, statuses[id], s)
		}
	}
	pct := func(v float64) *float64 { return &v }
	wantScores := map[string]Score{
		"":    {Controls: 6, Pass: 1, Fail: 1, Unknown: 1, NotCovered: 1, Manual: 2, Automated: 3, Percent: pct(50)},
		"1":   {Controls: 3, Pass: 1, Fail: 1, NotCovered: 1, Automated: 2, Percent: pct(50)},
		"1.1": {Controls: 2, Pass: 1, Fail: 1, Automated: 2, Percent: pct(50)},
		"2":   {Controls: 3, Unknown: 1, Manual: 2, Automated: 1},
	}
	check := func(name string, got Score) {
		w := wantScores[name]
		if got.Controls != w.Controls || got.Pass != w.Pass || got.Fail != w.Fail || got.Unknown != w.Unknown ||
			got.NotCovered != w.NotCovered || got.Manual != w.Manual || got.Automated != w.Automated {
			t.Errorf("score of %q = %+v, want %+v", name, got, w)
		}
		if (got.Percent == nil) != (w.Percent == nil) || (got.Percent != nil && *got.Percent != *w.Percent) {
			t.Errorf("percent of %q = %v, want %v", name, got.Percent, w.Percent)
		}
	}
	check("", rep.Score)
	if len(rep.Families) != 3 {
		t.Fatalf("families = %+v", rep.Families)
	}
	for _, f := range rep.Families {
		check(f.ID, f.Score)
	}
	if rep.Framework.ID != "test-1" || rep.Framework.Source != "evaluate_test.go" {
		t.Errorf("framework = %+v", rep.Framework)
	}
	// No percent without a control decided by checks: JSON says null, not 0.
	b, err := json.Marshal(rep.Families[2].Score)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"percent":null`) {
		t.Errorf("score of family 2 = %s, want percent null", b)
	}
}

func TestEvaluate_evidenceInReportOrder(t *testing.T) {
	fw := mustParse(t, testFramework)
	low := finding("P-A", "a", "k", findings.StatusOpen)
	low.Severity = findings.Low
	crit := finding("P-B", "z", "k", findings.StatusOpen)
	crit.Severity = findings.Critical
	c := Evaluate(fw, Input{Policies: ran(), Findings: []findings.Finding{low, crit}}).Controls[0]
	if len(c.Failing) != 2 || c.Failing[0].Severity != findings.Critical {
		t.Errorf("failing = %+v, want the critical finding first", c.Failing)
	}
}

func TestEvaluate_zeroAtMeansNow(t *testing.T) {
	fw := mustParse(t, testFramework)
	before := time.Now()
	rep := Evaluate(fw, Input{Policies: ran(), Findings: []findings.Finding{waived(finding("P-A", "r", "k", ""), before.Add(-time.Minute))}})
	if rep.At.Before(before) || rep.Controls[0].Status != StatusFail {
		t.Errorf("at %v, control %s: a waiver that expired a minute ago must not hold now", rep.At, rep.Controls[0].Status)
	}
}
