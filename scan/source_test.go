package scan_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

const smallWorld = "../collect/testdata/world.yaml"

// liveCollectors are the collectors of the small world, served by a simulator the test
// stops; the SDK clients are the real ones.
func liveCollectors(t *testing.T) []collectors.Collector {
	t.Helper()
	sim, err := collect.StartSimulator(smallWorld, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sim.Close() })
	cs, err := collect.Resolve(sim.Target(collect.Targets{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// privateTemp points the temporary directory at one of the test's own, so that what a
// live scan leaves behind there can be counted.
func privateTemp(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

func leftIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(dir, e.Name()))
	}
	return out
}

// A live scan collects the world, then evaluates what it read: its findings, the
// collection's own summary, the collection time in the history, and no file left behind.
func TestLive_scansWhatWasCollected(t *testing.T) {
	eng := builtinEngine(t)
	backends(t, func(t *testing.T, st *store.Store) {
		tmp := privateTemp(t)
		at := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
		res, err := scan.Run(context.Background(), scan.Request{Engine: eng, Store: st,
			Source: scan.Live(liveCollectors(t), collect.Options{Source: "warden test collect", Now: func() time.Time { return at }})})
		if err != nil {
			t.Fatal(err)
		}
		if res.Scan.Snapshot != scan.LiveName || res.Scan.Source != "warden test collect" || !res.Scan.CollectedAt.Equal(at) {
			t.Errorf("scan info %+v", res.Scan)
		}
		if res.Collection == nil || res.Collection.Resources != res.Scan.Resources || res.Collection.Calls == 0 {
			t.Errorf("collection %+v for %d resources", res.Collection, res.Scan.Resources)
		}
		found := map[string]bool{}
		for _, f := range res.Open() {
			found[f.Policy] = true
		}
		for _, p := range []string{"WARDEN-AWS-IAM-012", "WARDEN-AWS-NET-001", "WARDEN-GCP-IAM-002"} {
			if !found[p] {
				t.Errorf("no %s finding in the live scan (found %v)", p, found)
			}
		}
		if res.ExitCode(findings.High) != scan.ExitFindings {
			t.Errorf("exit code %d, want 1", res.ExitCode(findings.High))
		}
		scans, err := st.Scans(context.Background(), 1)
		if err != nil || len(scans) != 1 || scans[0].Snapshot != scan.LiveName || !scans[0].CollectedAt.Equal(at) {
			t.Errorf("history %+v, %v: want the live scan, collected at %s", scans, err, at)
		}
		if left := leftIn(t, tmp); len(left) > 0 {
			t.Errorf("the live scan left %v behind", left)
		}
	})
}

// A collection that fails is the scan's error as it is (the spooled file is no concern
// of the user's); nothing is evaluated, recorded or left behind.
func TestLive_failedCollectionIsTheError(t *testing.T) {
	tmp := privateTemp(t)
	st := openSQLite(t)
	cs, err := collect.Resolve(collect.Targets{GCP: &collect.GCP{Projects: []string{"p"}, Endpoint: "notaurl"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := scan.Run(context.Background(), scan.Request{Engine: testEngine(t), Store: st, Source: scan.Live(cs, collect.Options{})})
	if err == nil || !strings.HasPrefix(err.Error(), "collect gcp: ") || strings.Contains(err.Error(), "warden-scan-") || res != nil {
		t.Fatalf("result %v, error %v: want the collector's error alone", res, err)
	}
	if scans, err := st.Scans(context.Background(), 1); err != nil || len(scans) != 0 {
		t.Errorf("%d scans recorded, %v", len(scans), err)
	}
	if left := leftIn(t, tmp); len(left) > 0 {
		t.Errorf("the failed scan left %v behind", left)
	}
}

func TestRun_sourceErrors(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		source  scan.Source
		wantErr string
		is      error
	}{
		{"missing file", ctx, scan.File(filepath.Join(t.TempDir(), "nope.json")), "read snapshot: open ", os.ErrNotExist},
		{"no collectors", ctx, scan.Live(nil, collect.Options{}), "no live targets", collect.ErrNoTargets},
		{"interrupted collection", cancelled, scan.Live(liveCollectors(t), collect.Options{}), "interrupted", context.Canceled},
		{"no source", ctx, nil, "needs a source", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := scan.Run(tc.ctx, scan.Request{Engine: testEngine(t), Source: tc.source})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || tc.is != nil && !errors.Is(err, tc.is) || res != nil {
				t.Errorf("result %v, error %v: want one containing %q (is %v)", res, err, tc.wantErr, tc.is)
			}
		})
	}
}

// A snapshot file is named by its path in the result and the history.
func TestFile_isNamedByItsPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "monday.json")
	if err := os.WriteFile(path, []byte(snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0})), 0o644); err != nil {
		t.Fatal(err)
	}
	st := openSQLite(t)
	res, err := scan.Run(context.Background(), scan.Request{Engine: testEngine(t), Store: st, Source: scan.File(path)})
	if err != nil {
		t.Fatal(err)
	}
	scans, err := st.Scans(context.Background(), 1)
	if err != nil || res.Scan.Snapshot != path || len(scans) != 1 || scans[0].Snapshot != path || res.Collection != nil {
		t.Errorf("result named %q, history %+v, %v", res.Scan.Snapshot, scans, err)
	}
}

// --snapshot - reads standard input, named "-"; any other path is the file.
func TestPath_dashIsStandardInput(t *testing.T) {
	body := snap("2026-11-30T12:00:00Z", nil, root{"111111111111", false, 0})
	path := filepath.Join(t.TempDir(), "monday.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flag, name string }{{"-", "-"}, {path, path}} {
		res, err := scan.Run(context.Background(), scan.Request{Engine: testEngine(t), Source: scan.Path(tc.flag, strings.NewReader(body))})
		if err != nil {
			t.Fatalf("--snapshot %s: %v", tc.flag, err)
		}
		if res.Scan.Snapshot != tc.name || res.Scan.Resources != 1 {
			t.Errorf("--snapshot %s: named %q, %d resources", tc.flag, res.Scan.Snapshot, res.Scan.Resources)
		}
	}
}

func TestParseNow(t *testing.T) {
	if now, err := scan.ParseNow(""); err != nil || !now.IsZero() {
		t.Errorf("ParseNow(\"\") = %v, %v; want the zero time", now, err)
	}
	if now, err := scan.ParseNow("2026-11-30T12:00:00Z"); err != nil || !now.Equal(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseNow(RFC 3339) = %v, %v", now, err)
	}
	if _, err := scan.ParseNow("yesterday"); err == nil || !strings.HasPrefix(err.Error(), "--now: want an RFC 3339 time") {
		t.Errorf("ParseNow(yesterday) = %v, want the flag named", err)
	}
}
