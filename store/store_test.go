package store_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

func finding(policy, resource, scope string) findings.Finding {
	return findings.Finding{Policy: policy, Resource: resource, Scope: scope, Account: "1", Severity: findings.High,
		Status: findings.StatusOpen, Message: policy + " on " + resource, Fingerprint: findings.Fingerprint(policy, "1", resource, "")}
}

func open(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state", "warden.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestSaveScan_failedScopeCarriesFindingsAsUnknown(t *testing.T) {
	ctx := context.Background()
	st := open(t)
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

func TestOpen_refusesPostgresForNow(t *testing.T) {
	if _, err := store.Open(context.Background(), "postgres://localhost/warden"); err == nil {
		t.Error("PostgreSQL DSN accepted before the driver exists")
	}
}
