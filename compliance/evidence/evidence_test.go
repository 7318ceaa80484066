package evidence_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const acmeSnapshot = "../../fixtures/acme/snapshot.json"

// day0 is when the acme snapshot was collected.
var day0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// acmeDay writes the acme snapshot as collected days after day0, with edits applied to
// its text, and returns its path.
func acmeDay(t *testing.T, days int, edits ...func(t *testing.T, s string) string) string {
	t.Helper()
	b, err := os.ReadFile(acmeSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	s := replaceOnce(t, string(b), `"collected_at":"2026-11-30T12:00:00Z"`,
		`"collected_at":"`+day0.AddDate(0, 0, days).Format(time.RFC3339)+`"`)
	for _, e := range edits {
		s = e(t, s)
	}
	path := filepath.Join(t.TempDir(), "acme.json")
	if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func replaceOnce(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("fixture text %q not found; update the test", old)
	}
	return strings.Replace(s, old, new, 1)
}

// strongPasswords gives acme-main's password policy what CIS asks: what the fix did.
func strongPasswords(t *testing.T, s string) string {
	return replaceOnce(t, s, `"minimum_password_length":8,"password_reuse_prevention":0,"require_lowercase_characters":true,"require_numbers":true,"require_symbols":false`,
		`"minimum_password_length":14,"password_reuse_prevention":24,"require_lowercase_characters":true,"require_numbers":true,"require_symbols":true`)
}

// scopeFailed marks a scope failed and drops its resources, as a collection denied
// there would.
func scopeFailed(id string) func(t *testing.T, s string) string {
	return func(t *testing.T, s string) string {
		re := regexp.MustCompile(`\{"id":"` + regexp.QuoteMeta(id) + `"[^}]*\}`)
		scope := re.FindString(s)
		if scope == "" {
			t.Fatalf("no scope %s in the fixture; update the test", id)
		}
		failed := regexp.MustCompile(`"status":"ok"(,"resources":\d+)?`).ReplaceAllString(scope, `"status":"failed","error":"AccessDenied: denied by the test"`)
		s = strings.Replace(s, scope, failed, 1)
		var kept []string
		for _, line := range strings.Split(s, "\n") {
			if !strings.Contains(line, `"scope":"`+id+`"`) {
				kept = append(kept, line)
			}
		}
		s = strings.Join(kept, "\n")
		s = strings.ReplaceAll(strings.ReplaceAll(s, "},\n]", "}\n]"), "[\n,", "[\n")
		return s
	}
}

// record scans a snapshot file into env's history, evaluated at its collection time,
// with the audit entries warden scan writes.
func record(t *testing.T, env *remediatetest.Env, path string, at time.Time) store.ScanRecord {
	t.Helper()
	res, err := scan.Run(context.Background(), scan.Request{Source: scan.File(path), Engine: env.Engine, Store: env.Store,
		Now: at, Version: "test", Recorded: scan.Audit(env.Log, "alice", scan.VersionEvents(env.Engine, "", "")...)})
	if err != nil {
		t.Fatal(err)
	}
	scans, err := env.Store.Scans(context.Background(), 1)
	if err != nil || len(scans) != 1 || scans[0].ID != res.Scan.ID {
		t.Fatalf("latest scan %+v, %v: want scan %d", scans, err, res.Scan.ID)
	}
	return scans[0]
}

// cisAWS is the CIS AWS Foundations framework.
func cisAWS(t *testing.T) *compliance.Framework {
	t.Helper()
	fw, err := compliance.Lookup("cis-aws-3.0")
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

func control(t *testing.T, d *compliance.Document, id string) compliance.ControlResult {
	t.Helper()
	for _, c := range d.Report.Controls {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no control %s in the report", id)
	return compliance.ControlResult{}
}

// signer returns the audit log of env's store with a signing key, for checkpoints.
func signer(t *testing.T, env *remediatetest.Env) *audit.Log {
	t.Helper()
	s, _, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	return audit.New(env.Store, audit.Options{Signer: s})
}

// The acme organisation scanned three days running, with fixes applied through the
// remediation machine on the simulator between the first and second scans: the report
// at each time stands on the scan, checkpoint and fixes of that time.
func TestGather_acmeHistory(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			env := remediatetest.Start(t, dsn(t), remediatetest.World(1), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, remediatetest.Options{})
			signing := signer(t, env)
			fw := cisAWS(t)
			opts := evidence.ForEngine(env.Engine, nil, "warden test")
			gather := func(at time.Time) *compliance.Document {
				t.Helper()
				o := opts
				o.At = at
				d, err := evidence.Gather(ctx, env.Store, env.Log, fw, o)
				if err != nil {
					t.Fatalf("Gather at %s: %v", at, err)
				}
				return d
			}

			s1 := record(t, env, acmeDay(t, 0), day0)
			cp1, err := signing.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}

			// The fixes: the password policy (low risk, unattended), and SSH closed on
			// bob's approval, then rolled back.
			p := env.Plan(t, "alice")
			low := remediatetest.Only(p, "aws.iam.set_password_policy", 1)
			med := remediatetest.Only(p, "aws.ec2.revoke_ingress", 1)
			if len(low.Actions) != 1 || len(med.Actions) != 1 {
				t.Fatalf("plan: %d password-policy and %d revoke actions, want 1 each", len(low.Actions), len(med.Actions))
			}
			lowID, medID := low.Actions[0].ID, med.Actions[0].ID
			alice := env.Machine("alice", remediate.Limits{})
			res, err := alice.Apply(ctx, low, true)
			if err != nil || remediatetest.ItemOf(t, res, lowID).State != remediate.StateVerified {
				t.Fatalf("password fix: %+v %v", res, err)
			}
			res, err = alice.Apply(ctx, med, true)
			if err != nil {
				t.Fatal(err)
			}
			request := remediatetest.ItemOf(t, res, medID).Request
			if request == "" {
				t.Fatalf("SSH fix: %+v, want an approval request", res.Items)
			}
			if _, err := env.Gate.Decide(ctx, request, "bob", "cli", true, "CHG-1"); err != nil {
				t.Fatal(err)
			}
			if res, err = alice.Apply(ctx, med, true); err != nil || remediatetest.ItemOf(t, res, medID).State != remediate.StateVerified {
				t.Fatalf("approved SSH fix: %+v %v", res, err)
			}
			if it, err := alice.Rollback(ctx, medID); err != nil || it.State != remediate.StateRolledBack {
				t.Fatalf("rollback: %+v %v", it, err)
			}

			s2 := record(t, env, acmeDay(t, 1, strongPasswords), day0.AddDate(0, 0, 1))
			s3 := record(t, env, acmeDay(t, 2, strongPasswords, scopeFailed("aws/222222222222/iam")), day0.AddDate(0, 0, 2))
			cp2, err := signing.Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}

			// At the first scan: its evidence alone; the checkpoint signed after it is
			// not the report's.
			d1 := gather(s1.FinishedAt)
			if d1.Source.ScanID != s1.ID || !d1.Source.CollectedAt.Equal(day0) || d1.Source.Resources != s1.Resources || d1.Tool != "warden test" {
				t.Errorf("source at scan 1: %+v, tool %q", d1.Source, d1.Tool)
			}
			if !d1.Report.At.Equal(s1.FinishedAt) {
				t.Errorf("report at %s, want %s", d1.Report.At, s1.FinishedAt)
			}
			if d1.Checkpoint != nil {
				t.Errorf("checkpoint %+v at scan 1, signed after it", d1.Checkpoint)
			}
			if len(d1.Fixes) != 0 {
				t.Errorf("fixes before any was applied: %+v", d1.Fixes)
			}
			if len(d1.Trend) != 1 || d1.Trend[0].ScanID != s1.ID {
				t.Errorf("trend at scan 1: %+v", d1.Trend)
			}
			pw := "arn:aws:iam::111111111111:account-password-policy"
			c18 := control(t, d1, "1.8")
			if c18.Status != compliance.StatusFail || !failsOn(c18, pw) {
				t.Errorf("1.8 at scan 1: %s (%s), want failing on %s", c18.Status, c18.Reason, pw)
			}

			// At the second scan: the fixes applied since, with their audit entries, and
			// the first checkpoint.
			d2 := gather(s2.FinishedAt)
			if d2.Source.ScanID != s2.ID {
				t.Errorf("source at scan 2: %+v", d2.Source)
			}
			if d2.Checkpoint == nil || d2.Checkpoint.Note != string(cp1) {
				t.Errorf("checkpoint at scan 2: %+v, want the one signed after scan 1", d2.Checkpoint)
			} else if verified, err := audit.ParseCheckpoint(strings.SplitN(d2.Checkpoint.Note, "\n\n", 2)[0] + "\n"); err != nil ||
				verified.Size != d2.Checkpoint.Size || verified.Root.String() != d2.Checkpoint.Root {
				t.Errorf("checkpoint fields %+v disagree with its note: %+v %v", d2.Checkpoint, verified, err)
			}
			if c := control(t, d2, "1.8"); failsOn(c, pw) {
				t.Errorf("1.8 at scan 2 still fails on the fixed %s: %s", pw, c.Reason)
			}
			fixes := map[string]compliance.Fix{}
			for _, f := range d2.Fixes {
				fixes[f.Action] = f
			}
			if len(d2.Fixes) != 2 {
				t.Fatalf("fixes at scan 2: %+v, want the password policy and the SSH rule", d2.Fixes)
			}
			lowFix, medFix := fixes[lowID], fixes[medID]
			if lowFix.State != "verified" || lowFix.Remediator != "aws.iam.set_password_policy" || lowFix.Actor != "alice" ||
				lowFix.Policy != "WARDEN-AWS-IAM-013" || strings.Join(lowFix.Controls, ",") != "1.8,1.9" {
				t.Errorf("password fix: %+v", lowFix)
			}
			if medFix.State != "rolled_back" || medFix.Remediator != "aws.ec2.revoke_ingress" || medFix.Target != med.Actions[0].Target ||
				!slices.Contains(medFix.Controls, "5.2") {
				t.Errorf("SSH fix: %+v", medFix)
			}
			checkSeqs(t, env.Log, lowFix, map[string]string{lowID: "action.intent action.applied action.verified"})
			checkSeqs(t, env.Log, medFix, map[string]string{
				medID:   "action.intent action.applied action.verified action.intent action.rolled_back",
				request: "approval.requested approval.approved",
			})
			if len(d2.Trend) != 2 || d2.Trend[0].ScanID != s1.ID || d2.Trend[1].ScanID != s2.ID {
				t.Errorf("trend at scan 2: %+v", d2.Trend)
			} else if last := d2.Trend[1]; !reflect.DeepEqual(last.Score, d2.Report.Score) {
				t.Errorf("the trend's last point %+v is not the report's score %+v", last.Score, d2.Report.Score)
			}
			// Every finding resolved by the second scan was first seen a day before.
			if c := d2.Convergence; c.Resolved == 0 || c.MedianOpen != 24*time.Hour || c.P90Open != 24*time.Hour || c.Open == 0 {
				t.Errorf("convergence at scan 2: %+v, want resolutions after 24h", c)
			}
			if want := s2.FinishedAt.Sub(day0); d2.Convergence.OldestOpen != want {
				t.Errorf("oldest open finding at scan 2 is %s old, want %s (open since the first scan)", d2.Convergence.OldestOpen, want)
			}

			// Between the fix and its rollback, the SSH fix stood verified.
			mid := gather(medFix.At.Add(-time.Nanosecond))
			if mid.Source.ScanID != s1.ID {
				t.Errorf("source between the fixes: scan %d, want %d", mid.Source.ScanID, s1.ID)
			}
			if len(mid.Fixes) != 2 || mid.Fixes[1].Action != medID || mid.Fixes[1].State != "verified" {
				t.Errorf("fixes before the rollback: %+v, want the SSH fix verified", mid.Fixes)
			} else if want := medFix.AuditSeqs[:len(medFix.AuditSeqs)-1]; !slices.Equal(mid.Fixes[1].AuditSeqs, want) {
				// The rollback's intent was recorded by then; its end was not.
				t.Errorf("SSH fix before its rollback ended has audit entries %v, want %v", mid.Fixes[1].AuditSeqs, want)
			}

			// Now: the third scan, whose failed scope leaves acme-dev's password policy
			// unjudged: 1.8 is unknown, not passing.
			d3 := gather(time.Time{})
			if d3.Source.ScanID != s3.ID || len(d3.Trend) != 3 {
				t.Errorf("source now: %+v, trend of %d", d3.Source, len(d3.Trend))
			}
			if d3.Checkpoint == nil || d3.Checkpoint.Note != string(cp2) {
				t.Errorf("checkpoint now: %+v, want the latest", d3.Checkpoint)
			}
			var failed []string
			for _, s := range d3.Scopes {
				if s.Status != "ok" {
					failed = append(failed, s.ID)
				}
			}
			if strings.Join(failed, " ") != "aws/222222222222/iam aws/333333333333/ec2/eu-central-1" ||
				d3.Scopes[0].ID != failed[0] || d3.Scopes[1].ID != failed[1] || len(d3.Scopes) != len(s3.Scopes) {
				t.Errorf("scopes now: %+v, want the two failed first", d3.Scopes)
			}
			c18 = control(t, d3, "1.8")
			if c18.Status != compliance.StatusUnknown || !strings.Contains(c18.Reason, "scopes not read: aws/222222222222/iam") {
				t.Errorf("1.8 with acme-dev's IAM unread: %s (%s), want unknown naming the scope", c18.Status, c18.Reason)
			}
			for _, c := range d3.Report.Controls {
				if c.Status != compliance.StatusPass {
					continue
				}
				for _, r := range c.Runs {
					if len(r.FailedScopes) > 0 {
						t.Errorf("control %s passes although %s ran over failed scopes %v", c.ID, r.Policy, r.FailedScopes)
					}
				}
			}
		})
	}
}

// failsOn reports whether a control fails on a resource.
func failsOn(c compliance.ControlResult, resource string) bool {
	return slices.ContainsFunc(c.Failing, func(f findings.Finding) bool { return f.Resource == resource })
}

// checkSeqs checks that a fix's audit entries are exactly those of its subjects, in the
// kinds given per subject, in order.
func checkSeqs(t *testing.T, log *audit.Log, f compliance.Fix, want map[string]string) {
	t.Helper()
	got := map[string][]string{}
	for _, seq := range f.AuditSeqs {
		es, err := log.Entries(context.Background(), seq, 1)
		if err != nil || len(es) != 1 {
			t.Fatalf("entry %d: %v", seq, err)
		}
		got[es[0].Subject] = append(got[es[0].Subject], es[0].Kind)
	}
	if !slices.IsSorted(f.AuditSeqs) {
		t.Errorf("fix %s: audit seqs %v not in order", f.Action, f.AuditSeqs)
	}
	for subject, kinds := range want {
		if g := strings.Join(got[subject], " "); g != kinds {
			t.Errorf("fix %s: entries of %s are %q, want %q", f.Action, subject, g, kinds)
		}
	}
	if len(got) != len(want) {
		t.Errorf("fix %s: entries of %d subjects %v, want %d", f.Action, len(got), got, len(want))
	}
}

// hist is a store with scans saved as given, for tests that need exact times.
type hist struct {
	st  *store.Store
	log *audit.Log
}

func newHist(t *testing.T, dsn string) *hist {
	st := storetest.Open(t, dsn)
	return &hist{st: st, log: audit.New(st, audit.Options{})}
}

// save stores a scan finished at the given time with the given scopes, resources by
// type, evaluation errors and findings.
func (h *hist) save(t *testing.T, finished time.Time, scopes map[string]string, byType map[string]int, evalErrors int, fs ...findings.Finding) int64 {
	t.Helper()
	sum, err := json.Marshal(scan.Summary{ResourcesByType: byType, EvalErrors: evalErrors, Incomplete: evalErrors > 0})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range byType {
		n += c
	}
	complete := func(s string) bool { return scopes[s] == "ok" }
	id, _, err := h.st.SaveScan(context.Background(), &store.ScanRecord{StartedAt: finished.Add(-time.Second), FinishedAt: finished,
		Snapshot: "test.json", CollectedAt: finished.Add(-time.Minute), Resources: n, Policies: 4, Scopes: scopes, Summary: sum},
		fs, complete, nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testPolicies are four policies of the pack with their types: root keys (CIS 1.4) and
// SSH, RDP and all ports open to the internet (CIS 5.2).
var testPolicies = []*engine.Policy{
	{ID: "WARDEN-AWS-IAM-011", ResourceTypes: []string{"aws.iam.root_user"}},
	{ID: "WARDEN-AWS-NET-001", ResourceTypes: []string{"aws.ec2.security_group"}},
	{ID: "WARDEN-AWS-NET-002", ResourceTypes: []string{"aws.ec2.security_group"}},
	{ID: "WARDEN-AWS-NET-003", ResourceTypes: []string{"aws.ec2.security_group"}},
}

// A control whose policies found nothing passes only when every scope that can hold
// their resources was read and every evaluation ran: a failed scope of the resources'
// service, or a failed evaluation, makes it unknown; a failed scope of another service
// does not.
func TestGather_failedScopeMakesItsControlsUnknown(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := newHist(t, dsn(t))
			fw := cisAWS(t)
			byType := map[string]int{"aws.iam.root_user": 1, "aws.ec2.security_group": 4}
			t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
			all := map[string]string{"aws/1/iam": "ok", "aws/1/ec2/eu-west-1": "ok", "aws/1/acm/eu-west-1": "ok"}
			with := func(id, status string) map[string]string {
				m := maps.Clone(all)
				m[id] = status
				return m
			}
			scans := []struct {
				name       string
				scopes     map[string]string
				evalErrors int
				// want is the status of 1.4 (root user, IAM) and 5.2 (security groups, EC2).
				want14, want52 compliance.Status
				reason14       string
				reason52       string
			}{
				{name: "everything read", scopes: all, want14: compliance.StatusPass, want52: compliance.StatusPass},
				{name: "IAM failed", scopes: with("aws/1/iam", "failed"),
					want14: compliance.StatusUnknown, reason14: "scopes not read: aws/1/iam", want52: compliance.StatusPass},
				{name: "one EC2 region partial", scopes: with("aws/1/ec2/eu-west-1", "partial"),
					want14: compliance.StatusPass, want52: compliance.StatusUnknown, reason52: "WARDEN-AWS-NET-001 could not judge everything (scopes not read: aws/1/ec2/eu-west-1)"},
				{name: "EC2's regions not listed", scopes: with("aws/1/ec2", "failed"),
					want14: compliance.StatusPass, want52: compliance.StatusUnknown, reason52: "scopes not read: aws/1/ec2"},
				{name: "ACM failed", scopes: with("aws/1/acm/eu-west-1", "failed"), want14: compliance.StatusPass, want52: compliance.StatusPass},
				{name: "a GCP project failed", scopes: with("gcp/p/iam", "failed"), want14: compliance.StatusPass, want52: compliance.StatusPass},
				{name: "an evaluation failed", scopes: all, evalErrors: 1,
					want14: compliance.StatusUnknown, reason14: "1 evaluation failed", want52: compliance.StatusUnknown, reason52: "1 evaluation failed"},
			}
			for i, sc := range scans {
				finished := t0.Add(time.Duration(i) * time.Hour)
				h.save(t, finished, sc.scopes, byType, sc.evalErrors)
				d, err := evidence.Gather(context.Background(), h.st, h.log, fw, evidence.Options{At: finished, Policies: testPolicies})
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range []struct {
					id, reason string
					want       compliance.Status
				}{{"1.4", sc.reason14, sc.want14}, {"5.2", sc.reason52, sc.want52}} {
					got := control(t, d, c.id)
					if got.Status != c.want || !strings.Contains(got.Reason, c.reason) {
						t.Errorf("%s: %s is %s (%s), want %s with %q", sc.name, c.id, got.Status, got.Reason, c.want, c.reason)
					}
				}
			}
		})
	}
}

// The trend covers the latest TrendScans scans up to the report's time, oldest first;
// convergence counts the findings resolved within them.
func TestGather_trendAndConvergence(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			h := newHist(t, dsn(t))
			fw := cisAWS(t)
			t0 := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
			scopes := map[string]string{"aws/1/iam": "ok"}
			byType := map[string]int{"aws.iam.root_user": 1}
			rootKey := findings.Finding{Policy: "WARDEN-AWS-IAM-011", Severity: findings.Critical, Resource: "arn:aws:iam::1:root",
				ResourceType: "aws.iam.root_user", Account: "1", Scope: "aws/1/iam", Fingerprint: "fp-root", Status: findings.StatusOpen}
			other := findings.Finding{Policy: "WARDEN-NOT-IN-CIS", Severity: findings.High, Resource: "arn:aws:iam::1:user/x",
				ResourceType: "aws.iam.user", Account: "1", Scope: "aws/1/iam", Fingerprint: "fp-other", Status: findings.StatusOpen}
			var ids []int64
			for i := range evidence.TrendScans + 5 {
				var fs []findings.Finding
				// The root key is open in scans 0-9 and 20-29: resolved twice, after 10
				// scans (collected an hour apart) each time. The other policy's finding
				// comes and goes but is not the framework's.
				if i%20 < 10 {
					fs = append(fs, rootKey)
				}
				if i%2 == 0 {
					fs = append(fs, other)
				}
				ids = append(ids, h.save(t, t0.Add(time.Duration(i)*time.Hour), scopes, byType, 0, fs...))
			}
			last := t0.Add(time.Duration(evidence.TrendScans+4) * time.Hour)
			d, err := evidence.Gather(context.Background(), h.st, h.log, fw, evidence.Options{At: last.Add(30 * time.Minute), Policies: testPolicies})
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Trend) != evidence.TrendScans || d.Trend[0].ScanID != ids[5] || d.Trend[len(d.Trend)-1].ScanID != ids[len(ids)-1] {
				t.Fatalf("trend of %d points from scan %d to %d, want %d from %d to %d", len(d.Trend), d.Trend[0].ScanID,
					d.Trend[len(d.Trend)-1].ScanID, evidence.TrendScans, ids[5], ids[len(ids)-1])
			}
			for i, p := range d.Trend {
				scanIndex := i + 5
				wantOpen := 0
				if scanIndex%20 < 10 {
					wantOpen = 1
				}
				if p.Open["critical"] != wantOpen || p.Open["high"] != 0 || len(p.Open) != len(findings.Severities) {
					t.Errorf("trend point %d (scan %d): open %v, want %d critical and nothing else", i, p.ScanID, p.Open, wantOpen)
				}
				if !p.At.Equal(t0.Add(time.Duration(scanIndex) * time.Hour)) {
					t.Errorf("trend point %d at %s", i, p.At)
				}
			}
			// Within the window (scans 5-54): resolved at scans 10, 30 and 50, each after
			// 10 hours open: the first time since scan 0, before the window, whose
			// first_seen the history kept.
			c := d.Convergence
			if c.Resolved != 3 || c.MedianOpen != 10*time.Hour || c.P90Open != 10*time.Hour {
				t.Errorf("convergence %+v, want 3 resolved after 10h", c)
			}
			// Scan 54 (54 % 20 = 14) has the root key closed: nothing open.
			if c.Open != 0 || c.OldestOpen != 0 {
				t.Errorf("convergence %+v, want nothing open", c)
			}

			// At scan 45 (45 % 20 = 5, open since scan 40's collection).
			at45 := t0.Add(45 * time.Hour)
			d, err = evidence.Gather(context.Background(), h.st, h.log, fw, evidence.Options{At: at45, Policies: testPolicies})
			if err != nil {
				t.Fatal(err)
			}
			firstSeen := t0.Add(40*time.Hour - time.Minute)
			if d.Source.ScanID != ids[45] || d.Convergence.Open != 1 || d.Convergence.OldestOpen != at45.Sub(firstSeen) {
				t.Errorf("at scan 45: source %d, convergence %+v, want scan %d with the root key open since %s", d.Source.ScanID, d.Convergence, ids[45], firstSeen)
			}
			if len(d.Trend) != 46 || d.Trend[0].ScanID != ids[0] {
				t.Errorf("at scan 45: trend of %d from scan %d, want the 46 scans from the first", len(d.Trend), d.Trend[0].ScanID)
			}
		})
	}
}

func TestGather_errors(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			h := newHist(t, dsn(t))
			fw := cisAWS(t)
			now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }

			_, err := evidence.Gather(ctx, h.st, h.log, fw, evidence.Options{Policies: testPolicies, Now: clock})
			if !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "holds no scan") {
				t.Errorf("empty history: %v", err)
			}

			first := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
			h.save(t, first, map[string]string{"aws/1/iam": "ok"}, nil, 0)
			before := time.Date(2026, 10, 31, 0, 0, 0, 0, time.UTC)
			_, err = evidence.Gather(ctx, h.st, h.log, fw, evidence.Options{At: before, Policies: testPolicies, Now: clock})
			if !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "no scan finished at or before 2026-10-31T00:00:00Z") ||
				!strings.Contains(err.Error(), "first scan finished at 2026-11-01T08:00:00Z") {
				t.Errorf("before the first scan: %v", err)
			}

			_, err = evidence.Gather(ctx, h.st, h.log, fw, evidence.Options{At: now.Add(time.Hour), Policies: testPolicies, Now: clock})
			if err == nil || !strings.Contains(err.Error(), "2026-12-01T01:00:00Z is in the future") {
				t.Errorf("a time to come: %v", err)
			}

			// At the first scan itself: it counts (at or before).
			d, err := evidence.Gather(ctx, h.st, h.log, fw, evidence.Options{At: first, Policies: testPolicies, Now: clock})
			if err != nil || !d.Generated.Equal(now) || !d.Report.At.Equal(first) {
				t.Fatalf("at the first scan: %+v, %v", d, err)
			}
		})
	}
}

// A checkpoint whose row was edited to disagree with its signed note is refused, not
// reported.
func TestGather_editedCheckpointIsAnError(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			url := dsn(t)
			h := newHist(t, url)
			s, _, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
			if err != nil {
				t.Fatal(err)
			}
			if err := h.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := h.log.Append(ctx, tx, audit.Event{Actor: "alice", Kind: audit.KindScanRecorded, Subject: "scan/1"})
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if _, err := audit.New(h.st, audit.Options{Signer: s}).Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			h.save(t, time.Now().Add(-time.Minute), map[string]string{"aws/1/iam": "ok"}, nil, 0)
			if d, err := evidence.Gather(ctx, h.st, h.log, cisAWS(t), evidence.Options{Policies: testPolicies}); err != nil || d.Checkpoint == nil || d.Checkpoint.Size != 1 {
				t.Fatalf("before the edit: %+v, %v", d, err)
			}
			db, _ := storetest.RawDB(t, url)
			if _, err := db.Exec(`UPDATE audit_checkpoints SET size = 7`); err != nil {
				t.Fatal(err)
			}
			_, err = evidence.Gather(ctx, h.st, h.log, cisAWS(t), evidence.Options{Policies: testPolicies})
			if err == nil || !strings.Contains(err.Error(), "its note says size 1") {
				t.Errorf("edited checkpoint: %v", err)
			}
		})
	}
}
