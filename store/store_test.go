package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

func finding(policy, resource, scope string) findings.Finding {
	return findings.Finding{Policy: policy, Resource: resource, Scope: scope, Account: "1", Severity: findings.High,
		Status: findings.StatusOpen, Message: policy + " on " + resource, Fingerprint: findings.Fingerprint(policy, "1", resource, "")}
}

// backends are the databases every store test runs on: SQLite always, PostgreSQL when
// WARDEN_TEST_POSTGRES names a server (.ci/run starts one; under CI it is required).
func backends(t *testing.T) map[string]func(t *testing.T) string {
	b := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "state", "warden.db") },
	}
	base := os.Getenv("WARDEN_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("WARDEN_TEST_POSTGRES is not set: .ci/run starts PostgreSQL for the store's tests")
		}
		t.Log("PostgreSQL not tested: set WARDEN_TEST_POSTGRES=postgres://user:pass@host/db")
		return b
	}
	b["postgres"] = func(t *testing.T) string { return freshSchema(t, base) }
	return b
}

// freshSchema makes an empty schema for one test and returns the URL that uses it.
func freshSchema(t *testing.T, base string) string {
	t.Helper()
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	name := fmt.Sprintf("t%d_%d", time.Now().UnixNano(), rand.Int64N(1e6))
	if _, err := db.Exec("CREATE SCHEMA " + name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP SCHEMA " + name + " CASCADE") })
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + name
}

func open(t *testing.T, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSaveScan_failedScopeCarriesFindingsAsUnknown(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) { testCarryOver(t, open(t, dsn(t))) })
	}
}

func testCarryOver(t *testing.T, st *store.Store) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	all := func(string) bool { return true }
	first := []findings.Finding{finding("P1", "a", "aws/1/iam"), finding("P1", "b", "aws/1/ec2/eu-west-1"), finding("P2", "c", "aws/1/iam")}
	if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "one", CollectedAt: t0}, first, all); err != nil {
		t.Fatal(err)
	}
	// Second scan: EC2 in eu-west-1 failed, so b is unknown; c was fixed in a complete scope.
	ec2Failed := func(scope string) bool { return scope != "aws/1/ec2/eu-west-1" }
	second := []findings.Finding{finding("P1", "a", "aws/1/iam"), finding("P3", "d", "aws/1/iam")}
	_, stored, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "two", CollectedAt: t0.Add(24 * time.Hour)}, second, ec2Failed)
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != 3 {
		t.Fatalf("stored %d findings, want 3 (a, d, and b carried): %+v", len(stored), stored)
	}
	prev, cur := mustFindings(t, st, 1), mustFindings(t, st, 2)
	d := findings.Compare(prev, cur)
	check := func(name string, got []findings.Finding, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s = %d findings, want %v", name, len(got), want)
			return
		}
		for i, f := range got {
			if f.Resource != want[i] {
				t.Errorf("%s[%d] = %s, want %s", name, i, f.Resource, want[i])
			}
		}
	}
	check("new", d.New, "d")
	check("resolved", d.Resolved, "c")
	check("open", d.Open, "a")
	check("unknown", d.Unknown, "b")
	for _, f := range cur {
		if f.Resource == "a" && !f.FirstSeen.Equal(t0) {
			t.Errorf("first_seen of a = %v, want %v (kept from the first scan)", f.FirstSeen, t0)
		}
	}
	// Third scan reads everything again and b is gone: now it is resolved.
	if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "three", CollectedAt: t0.Add(48 * time.Hour)}, second, all); err != nil {
		t.Fatal(err)
	}
	d = findings.Compare(cur, mustFindings(t, st, 3))
	check("resolved after recovery", d.Resolved, "b")
	scans, err := st.Scans(ctx, 10)
	if err != nil || len(scans) != 3 || scans[0].Snapshot != "three" {
		t.Fatalf("scans = %+v, %v", scans, err)
	}
}

func mustFindings(t *testing.T, st *store.Store, id int64) []findings.Finding {
	t.Helper()
	fs, err := st.Findings(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestSaveScan_concurrentWriters saves scans from several connections at once: each
// must carry over from the one before, none may be lost.
func TestSaveScan_concurrentWriters(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			url := dsn(t)
			const writers = 4
			stores := make([]*store.Store, writers)
			for i := range stores {
				stores[i] = open(t, url)
			}
			ctx := context.Background()
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			var wg sync.WaitGroup
			errs := make(chan error, writers*5)
			for i, st := range stores {
				wg.Go(func() {
					for j := range 5 {
						f := finding("P1", fmt.Sprintf("r%d-%d", i, j), "aws/1/iam")
						if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "s", CollectedAt: t0}, []findings.Finding{f}, func(string) bool { return false }); err != nil {
							errs <- err
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			scans, err := stores[0].Scans(ctx, 100)
			if err != nil || len(scans) != writers*5 {
				t.Fatalf("%d scans, %v; want %d", len(scans), err, writers*5)
			}
			// Every scope was incomplete, so the last scan carries every finding ever seen.
			last := mustFindings(t, stores[0], scans[0].ID)
			if len(last) != writers*5 {
				t.Errorf("the last scan holds %d findings, want all %d carried over", len(last), writers*5)
			}
		})
	}
}

func TestOpen_errorsNameTheDatabaseWithoutPassword(t *testing.T) {
	_, err := store.Open(context.Background(), "postgres://warden:s3cret@127.0.0.1:1/warden?connect_timeout=2")
	if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("error %v: want one naming the server without the password", err)
	}
}
