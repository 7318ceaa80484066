package scan_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

func scanInto(t *testing.T, st *store.Store, name, snapshot string) *scan.Result {
	t.Helper()
	res, err := scan.Run(context.Background(), scan.Request{Source: scan.Reader(strings.NewReader(snapshot), name), Engine: testEngine(t), Store: st})
	if err != nil {
		t.Fatalf("scan %s: %v", name, err)
	}
	return res
}

// A policy that failed on a resource makes the result incomplete, and the finding it
// had on that resource before is carried over as unknown, not resolved.
func TestRun_evalErrorMakesResultIncompleteAndFindingUnknown(t *testing.T) {
	backends(t, func(t *testing.T, st *store.Store) {
		first := scanInto(t, st, "one", snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0}))
		if first.Summary.Findings != 1 || first.Summary.Incomplete || first.Scan.ID == 0 {
			t.Fatalf("first scan: %+v, id %d", first.Summary, first.Scan.ID)
		}
		second := scanInto(t, st, "two", snap("2026-11-30T13:00:00Z", nil, root{"111111111111", false, 1}))
		if !second.Summary.Incomplete || second.Summary.EvalErrors != 1 || len(second.EvalErrors) != 1 {
			t.Errorf("second scan summary %+v, eval errors %+v: want incomplete with one error", second.Summary, second.EvalErrors)
		}
		if len(second.Findings) != 1 || second.Findings[0].Status != findings.StatusUnknown || second.Summary.Unknown != 1 {
			t.Fatalf("second scan findings %+v: want the root finding carried over as unknown", second.Findings)
		}
		_, _, d, err := scan.DiffLatest(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Resolved) != 0 || len(d.Unknown) != 1 {
			t.Errorf("diff: %d resolved, %d unknown; want 0 and 1", len(d.Resolved), len(d.Unknown))
		}
	})
}

// A scope that could not be read says nothing of its resources: their findings are
// carried over as unknown, while a finding gone from a scope read in full is resolved.
// Findings seen again keep the time they were first seen.
func TestRun_unreadScopeCarriesItsFindingsOverAsUnknown(t *testing.T) {
	backends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		scanInto(t, st, "monday", snap("2026-11-30T12:00:00Z", []string{},
			root{"111111111111", false, 0}, root{"222222222222", false, 0}, root{"333333333333", false, 0}))
		// 222… cannot be read; 333… was fixed; 111… is as it was.
		tuesday := scanInto(t, st, "tuesday", snap("2026-12-01T12:00:00Z", []string{"222222222222"},
			root{"111111111111", false, 0}, root{"333333333333", true, 0}))
		byResource := map[string]findings.Finding{}
		for _, f := range tuesday.Findings {
			if f.Policy == "TEST-ROOT-001" {
				byResource[f.Resource] = f
			}
		}
		monday := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		if f := byResource["arn:aws:iam::222222222222:root"]; f.Status != findings.StatusUnknown || !f.FirstSeen.Equal(monday) {
			t.Errorf("finding in the unread scope: %+v; want unknown, first seen on monday", f)
		}
		if f := byResource["arn:aws:iam::111111111111:root"]; f.Status != findings.StatusOpen || !f.FirstSeen.Equal(monday) {
			t.Errorf("finding seen again: %+v; want open, first seen on monday", f)
		}
		if _, ok := byResource["arn:aws:iam::333333333333:root"]; ok {
			t.Errorf("the fixed root's finding is still there")
		}
		if tuesday.Verdict(findings.Critical).Code != scan.ExitFindings || tuesday.Summary.IncompleteScopes != 1 {
			t.Errorf("verdict %+v, summary %+v", tuesday.Verdict(findings.Critical), tuesday.Summary)
		}
		_, _, d, err := scan.DiffLatest(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Resolved) != 1 || d.Resolved[0].Resource != "arn:aws:iam::333333333333:root" || len(d.Unknown) != 1 || len(d.Open) != 1 {
			t.Errorf("diff: resolved %+v, %d unknown, %d open; want 333… resolved, one unknown, one open", d.Resolved, len(d.Unknown), len(d.Open))
		}
	})
}

// The history records when the world was read: the snapshot's collected_at, not the
// evaluation time --now gives, and new findings are first seen then.
func TestRun_historyRecordsTheCollectionTimeUnderNow(t *testing.T) {
	backends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		collected := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		evaluated := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
		before := time.Now()
		res, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snap(collected.Format(time.RFC3339), nil, root{"111111111111", false, 0})), "s"),
			Engine: testEngine(t), Store: st, Now: evaluated})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Scan.CollectedAt.Equal(collected) || !res.Scan.EvaluatedAt.Equal(evaluated) {
			t.Errorf("result: collected %s, evaluated %s", res.Scan.CollectedAt, res.Scan.EvaluatedAt)
		}
		scans, err := st.Scans(ctx, 1)
		if err != nil || len(scans) != 1 {
			t.Fatalf("scans %+v, %v", scans, err)
		}
		rec := scans[0]
		if !rec.CollectedAt.Equal(collected) {
			t.Errorf("history: collected_at %s, want the snapshot's %s (not --now's %s)", rec.CollectedAt, collected, evaluated)
		}
		if rec.StartedAt.Before(before.Add(-time.Second)) || rec.StartedAt.After(time.Now()) || rec.FinishedAt.Before(rec.StartedAt) {
			t.Errorf("history: started %s, finished %s; want the scan's own times", rec.StartedAt, rec.FinishedAt)
		}
		fs, err := st.Findings(ctx, rec.ID)
		if err != nil || len(fs) != 1 || !fs[0].FirstSeen.Equal(collected) {
			t.Errorf("stored findings %+v, %v: want one, first seen at collection", fs, err)
		}
	})
}

// What Recorded writes commits with the scan: it sees the scan inside the transaction,
// and its failure records nothing.
func TestRun_recordedRunsInTheScansTransaction(t *testing.T) {
	backends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		source := func() scan.Source {
			return scan.Reader(strings.NewReader(snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0})), "s")
		}
		var seen int
		var id int64
		res, err := scan.Run(ctx, scan.Request{Source: source(), Engine: testEngine(t), Store: st,
			Recorded: func(ctx context.Context, tx *store.Tx, rec store.ScanRecord, diff findings.Diff) error {
				id = rec.ID
				if len(diff.New) != 1 || len(diff.Open)+len(diff.Resolved)+len(diff.Unknown) != 0 {
					t.Errorf("Recorded got %+v, want 1 new finding", diff)
				}
				return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM scans WHERE id = ?`, rec.ID).Scan(&seen)
			}})
		if err != nil {
			t.Fatal(err)
		}
		if seen != 1 || id == 0 || res.Scan.ID != id {
			t.Errorf("Recorded saw %d scans of id %d; result id %d", seen, id, res.Scan.ID)
		}
		boom := errors.New("audit log unavailable")
		_, err = scan.Run(ctx, scan.Request{Source: source(), Engine: testEngine(t), Store: st,
			Recorded: func(context.Context, *store.Tx, store.ScanRecord, findings.Diff) error { return boom }})
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "record scan: ") {
			t.Errorf("error %v, want the hook's, wrapped", err)
		}
		if scans, err := st.Scans(ctx, 5); err != nil || len(scans) != 1 {
			t.Errorf("%d scans recorded, %v: want only the first", len(scans), err)
		}
	})
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
	eng := testEngine(t)
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
			st := openSQLite(t)
			_, err := scan.Run(context.Background(), scan.Request{Source: scan.Reader(strings.NewReader(snap(tc.at, nil, root{"111111111111", false, 0})), "snap.json"),
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

// Cancelling a scan while a policy evaluates ends in an error, never in a result, and
// records nothing.
func TestRun_cancelledWhileEvaluatingIsAnErrorAndRecordsNothing(t *testing.T) {
	eng := newEngine(t, map[string]string{"slow.rego": slowPolicy})
	st := openSQLite(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	start := time.Now()
	res, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0})), "snap.json"), Engine: eng, Store: st})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("result %+v, error %v: want context.Canceled", res, err)
	}
	if res != nil {
		t.Errorf("an interrupted scan returned a result: %+v", res.Summary)
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
	st := openSQLite(t)
	withRoot := newEngine(t, map[string]string{"root.rego": rootPolicy})
	if _, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0})), "one"), Engine: withRoot, Store: st}); err != nil {
		t.Fatal(err)
	}
	other := newEngine(t, map[string]string{"low.rego": lowPolicy})
	second, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snap("2026-11-30T13:00:00Z", nil, root{"111111111111", false, 0})), "two"), Engine: other, Store: st})
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

func TestDiffLatest_needsTwoScans(t *testing.T) {
	st := openSQLite(t)
	if _, _, _, err := scan.DiffLatest(context.Background(), st); !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "run warden scan twice") {
		t.Errorf("diff of an empty history: %v", err)
	}
}
