package scan_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// rootPolicy finds a root user without MFA, and fails at run time (two values for the
// complete rule x) when the root user also has active access keys.
const rootPolicy = `# METADATA
# title: Root without MFA
# custom:
#   id: TEST-ROOT-001
#   severity: critical
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package test.root

x := 1 if input.resource.attributes.mfa_active == false
x := 2 if input.resource.attributes.access_keys_active > 0

deny contains "root has no MFA" if {
	input.resource.attributes.mfa_active == false
	x != 3
}
`

// slowPolicy iterates long enough to be interrupted.
const slowPolicy = `# METADATA
# title: Slow
# custom:
#   id: TEST-SLOW-001
#   severity: low
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package test.slow

deny contains "never" if {
	some i in numbers.range(1, 30000)
	some j in numbers.range(1, 30000)
	i * j == -1
}
`

func newEngine(t *testing.T, files map[string]string) *engine.Engine {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys, Prefix: "testpolicies"}}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func rootSnapshot(collectedAt string, keys int) string {
	return `{"version": 1, "collected_at": "` + collectedAt + `", "resources": [
{"uid": "arn:aws:iam::111111111111:root", "type": "aws.iam.root_user", "account": "111111111111", "region": "global",
 "attributes": {"mfa_active": false, "access_keys_active": ` + string(rune('0'+keys)) + `}}]}`
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// A policy that failed on a resource makes the report incomplete, and the finding it
// had on that resource before is carried over as unknown, not resolved.
func TestRun_evalErrorMakesReportIncompleteAndFindingUnknown(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, map[string]string{"root.rego": rootPolicy})
	st := openStore(t)
	first, err := scan.Run(ctx, scan.Request{Snapshot: "-", Label: "one", Input: strings.NewReader(rootSnapshot("2026-11-30T12:00:00Z", 0)), Engine: eng, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if first.Summary.Findings != 1 || first.Summary.Incomplete {
		t.Fatalf("first scan: %+v", first.Summary)
	}
	second, err := scan.Run(ctx, scan.Request{Snapshot: "-", Label: "two", Input: strings.NewReader(rootSnapshot("2026-11-30T13:00:00Z", 1)), Engine: eng, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Summary.Incomplete || second.Summary.EvalErrors != 1 || len(second.EvalErrors) != 1 {
		t.Errorf("second scan summary %+v, eval errors %+v: want incomplete with one error", second.Summary, second.EvalErrors)
	}
	if len(second.Findings) != 1 || second.Findings[0].Status != findings.StatusUnknown {
		t.Fatalf("second scan findings %+v: want the root finding carried over as unknown", second.Findings)
	}
	_, _, d, err := scan.DiffLatest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Resolved) != 0 || len(d.Unknown) != 1 {
		t.Errorf("diff: %d resolved, %d unknown; want 0 and 1", len(d.Resolved), len(d.Unknown))
	}
}

func TestErrored(t *testing.T) {
	errored := scan.Errored([]findings.EvalError{{Policy: "P1", Resource: "a"}, {Resource: "b"}, {Policy: "P2", Resource: "c\xff"}})
	for _, tc := range []struct {
		policy, resource string
		want             bool
	}{
		{"P1", "a", true},
		{"P2", "a", false},
		{"P1", "b", true}, // no policy: every policy on b failed
		{"P9", "b", true},
		{"P2", "c\ufffd", true}, // compared as the history stores it
		{"P1", "z", false},
	} {
		if got := errored(tc.policy, tc.resource); got != tc.want {
			t.Errorf("errored(%q, %q) = %v, want %v", tc.policy, tc.resource, got, tc.want)
		}
	}
	if scan.Errored(nil)("P1", "a") {
		t.Error("no eval errors, yet a pair errored")
	}
}

// A collected_at far in the future would make every age look young; it is refused
// unless the evaluation time is given.
func TestRun_refusesCollectedAtInTheFuture(t *testing.T) {
	eng := newEngine(t, map[string]string{"root.rego": rootPolicy})
	soon := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name, at string
		now      time.Time
		wantErr  string
	}{
		{"year 3000", "3000-01-01T00:00:00Z", time.Time{}, "line 1: collected_at: 3000-01-01T00:00:00Z is "},
		{"year 9999", "9999-12-31T23:59:59Z", time.Time{}, "collected_at: 9999-12-31T23:59:59Z is "},
		{"two days ahead", time.Now().Add(49 * time.Hour).UTC().Format(time.RFC3339), time.Time{}, "days ahead of this machine's clock"},
		{"a little ahead is clock skew", soon, time.Time{}, ""},
		{"in the past", "2026-11-30T12:00:00Z", time.Time{}, ""},
		{"future with an evaluation time", "3000-01-01T00:00:00Z", time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := openStore(t)
			_, err := scan.Run(context.Background(), scan.Request{Snapshot: "-", Label: "snap.json", Input: strings.NewReader(rootSnapshot(tc.at, 0)),
				Engine: eng, Store: st, Now: tc.now})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "read snapshot snap.json: ") {
				t.Fatalf("error %v, want one naming the file and %q", err, tc.wantErr)
			}
			if scans, err := st.Scans(context.Background(), 1); err != nil || len(scans) != 0 {
				t.Errorf("a refused snapshot was recorded: %d scans, %v", len(scans), err)
			}
		})
	}
}

// Cancelling a scan while a policy evaluates ends in an error, never in a report, and
// records nothing.
func TestRun_cancelledWhileEvaluatingIsAnErrorAndRecordsNothing(t *testing.T) {
	eng := newEngine(t, map[string]string{"slow.rego": slowPolicy})
	st := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	rep, err := scan.Run(ctx, scan.Request{Snapshot: "-", Label: "snap.json", Input: strings.NewReader(rootSnapshot("2026-11-30T12:00:00Z", 0)), Engine: eng, Store: st})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("report %+v, error %v: want context.Canceled", rep, err)
	}
	if rep != nil {
		t.Errorf("an interrupted scan returned a report: %+v", rep.Summary)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("cancellation took %s", d)
	}
	if scans, err := st.Scans(context.Background(), 1); err != nil || len(scans) != 0 {
		t.Errorf("an interrupted scan was recorded: %d scans, %v", len(scans), err)
	}
}

// A policy that was not loaded in a scan did not judge anything: its earlier findings
// are carried over as unknown, not resolved.
func TestRun_findingsOfAPolicyNotLoadedAreUnknownNotResolved(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	withRoot := newEngine(t, map[string]string{"root.rego": rootPolicy})
	if _, err := scan.Run(ctx, scan.Request{Snapshot: "-", Label: "one", Input: strings.NewReader(rootSnapshot("2026-11-30T12:00:00Z", 0)), Engine: withRoot, Store: st}); err != nil {
		t.Fatal(err)
	}
	other := newEngine(t, map[string]string{"keys.rego": strings.NewReplacer("TEST-ROOT-001", "TEST-KEYS-001", "package test.root", "package test.keys",
		"mfa_active == false\n\tx != 3", "access_keys_active > 1").Replace(rootPolicy)})
	second, err := scan.Run(ctx, scan.Request{Snapshot: "-", Label: "two", Input: strings.NewReader(rootSnapshot("2026-11-30T13:00:00Z", 0)), Engine: other, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Findings) != 1 || second.Findings[0].Status != findings.StatusUnknown {
		t.Fatalf("findings %+v: want the root finding carried over as unknown", second.Findings)
	}
	_, _, d, err := scan.DiffLatest(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Resolved) != 0 || len(d.Unknown) != 1 {
		t.Errorf("diff: %d resolved, %d unknown; want 0 and 1", len(d.Resolved), len(d.Unknown))
	}
}

// A waiver's expiry is judged against today, not against an old snapshot's collected_at:
// a waiver that has run out no longer suppresses, however old the snapshot.
func TestRun_waiverExpiryIsJudgedAtTheLaterOfTodayAndCollection(t *testing.T) {
	yesterday := time.Now().Add(-24 * time.Hour).UTC().Format("2006-01-02")
	set, err := waivers.Parse([]byte("waivers:\n  - policy: TEST-ROOT-001\n    resource: \"arn:aws:iam::*:root\"\n    reason: r\n    owner: o@x\n    expires: "+yesterday+"\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, map[string]string{"root.rego": rootPolicy})
	old := time.Now().AddDate(0, -1, 0).UTC().Format(time.RFC3339)
	rep, err := scan.Run(context.Background(), scan.Request{Snapshot: "-", Label: "old", Input: strings.NewReader(rootSnapshot(old, 0)), Engine: eng, Waivers: set})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) != 1 || rep.Findings[0].Status != findings.StatusOpen || len(rep.ExpiredWaivers) != 1 {
		t.Fatalf("findings %+v, expired waivers %+v: want the finding open and the waiver listed as expired", rep.Findings, rep.ExpiredWaivers)
	}
}
