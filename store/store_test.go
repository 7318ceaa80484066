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
	"unicode/utf8"

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
	if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "one", CollectedAt: t0}, first, all, nil); err != nil {
		t.Fatal(err)
	}
	// Second scan: EC2 in eu-west-1 failed, so b is unknown; c was fixed in a complete scope.
	ec2Failed := func(scope string) bool { return scope != "aws/1/ec2/eu-west-1" }
	second := []findings.Finding{finding("P1", "a", "aws/1/iam"), finding("P3", "d", "aws/1/iam")}
	_, stored, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "two", CollectedAt: t0.Add(24 * time.Hour)}, second, ec2Failed, nil)
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
	if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "three", CollectedAt: t0.Add(48 * time.Hour)}, second, all, nil); err != nil {
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
						if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "s", CollectedAt: t0}, []findings.Finding{f}, func(string) bool { return false }, nil); err != nil {
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

// A policy that failed on a resource did not judge it: a finding open before on that
// (policy, resource) pair is carried over as unknown, never resolved, even though the
// resource's scope was read in full.
func TestSaveScan_erroredPairsCarryFindingsAsUnknown(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t, dsn(t))
			ctx := context.Background()
			t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
			all := func(string) bool { return true }
			first := []findings.Finding{finding("P1", "a", "aws/1/iam"), finding("P2", "a", "aws/1/iam"),
				finding("P1", "b", "aws/1/iam"), finding("P3", "c", "aws/1/iam")}
			if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "one", CollectedAt: t0}, first, all, nil); err != nil {
				t.Fatal(err)
			}
			// Second scan sees nothing: P1 failed on a, every policy failed on c (the
			// engine could not prepare the type's queries), and b and P2 on a were fixed.
			errored := func(policy, resource string) bool {
				return (policy == "P1" && resource == "a") || resource == "c"
			}
			_, stored, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "two", CollectedAt: t0.Add(time.Hour)}, nil, all, errored)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, f := range stored {
				got[f.Policy+" "+f.Resource] = f.Status
			}
			want := map[string]string{"P1 a": findings.StatusUnknown, "P3 c": findings.StatusUnknown}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("stored %v, want %v", got, want)
			}
			d := findings.Compare(mustFindings(t, st, 1), mustFindings(t, st, 2))
			if len(d.Resolved) != 2 || len(d.Unknown) != 2 {
				t.Errorf("resolved %d (want 2: P2 on a, P1 on b), unknown %d (want 2)", len(d.Resolved), len(d.Unknown))
			}
			for _, f := range d.Resolved {
				if errored(f.Policy, f.Resource) {
					t.Errorf("%s on %s resolved although its evaluation failed", f.Policy, f.Resource)
				}
			}
		})
	}
}

// Resource-controlled strings may hold invalid UTF-8 and NUL bytes; PostgreSQL refuses
// both in text columns. The scan must still be stored, with every finding, as valid
// UTF-8, on both databases.
func TestSaveScan_storesInvalidUTF8AsValidText(t *testing.T) {
	for name, dsn := range backends(t) {
		t.Run(name, func(t *testing.T) {
			st := open(t, dsn(t))
			ctx := context.Background()
			bad := finding("P1", "arn:aws:iam::1:user/\xff\xfe\x00x", "aws/1/iam\xc3")
			bad.Message = "user \xff has\x00 no MFA \x1b[2J"
			bad.Title = "T\xe2\x82"
			bad.Account = "1\x00"
			good := finding("P1", "plain", "aws/1/iam")
			rec := &store.ScanRecord{Snapshot: "snap\xff.json", Source: "src\x00", CollectedAt: time.Now(),
				Scopes: map[string]string{"aws/1/iam\xc3": "ok"}}
			_, stored, err := st.SaveScan(ctx, rec, []findings.Finding{bad, good}, func(string) bool { return true }, nil)
			if err != nil {
				t.Fatalf("save scan with invalid UTF-8: %v", err)
			}
			if len(stored) != 2 {
				t.Fatalf("stored %d findings, want 2", len(stored))
			}
			fs := mustFindings(t, st, rec.ID)
			if len(fs) != 2 {
				t.Fatalf("read back %d findings, want 2", len(fs))
			}
			for _, f := range fs {
				for _, s := range []string{f.Resource, f.Message, f.Title, f.Account, f.Scope} {
					if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
						t.Errorf("stored %q: not valid UTF-8 text", s)
					}
				}
				if f.Fingerprint == bad.Fingerprint && f.Resource != "arn:aws:iam::1:user/\ufffd\ufffd\ufffdx" {
					t.Errorf("resource stored as %q, want each bad byte as U+FFFD", f.Resource)
				}
			}
			scans, err := st.Scans(ctx, 1)
			if err != nil || len(scans) != 1 || !utf8.ValidString(scans[0].Snapshot) || !utf8.ValidString(scans[0].Source) {
				t.Errorf("scans = %+v, %v", scans, err)
			}
			// The next scan still matches the finding by fingerprint: first_seen is kept.
			_, again, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "two", CollectedAt: time.Now()}, []findings.Finding{bad}, func(string) bool { return true }, nil)
			if err != nil || len(again) != 1 || !again[0].FirstSeen.Equal(rec.CollectedAt) {
				t.Errorf("second save: %+v, %v; want first_seen %v kept", again, err, rec.CollectedAt)
			}
		})
	}
}

// A path is a path: ?, # and % in it must not become a SQLite URI query, fragment or
// escape, writing the history to another file.
func TestOpen_sqlitePathWithURICharacters(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a?b#c%d.db", "100%.db", "x#y.db", "q?mode=memory.db", "sp ace.db", "pct%3F.db"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "sub", name)
			st := open(t, path)
			if _, _, err := st.SaveScan(context.Background(), &store.ScanRecord{Snapshot: "s", CollectedAt: time.Now()}, nil, func(string) bool { return true }, nil); err != nil {
				t.Fatal(err)
			}
			st.Close()
			if _, err := os.Stat(path); err != nil {
				t.Errorf("history not at %s: %v", path, err)
			}
			// Reopened by the same path, the scan is there.
			scans, err := open(t, path).Scans(context.Background(), 10)
			if err != nil || len(scans) != 1 {
				t.Errorf("reopened %s: %d scans, %v", path, len(scans), err)
			}
		})
	}
	entries, err := os.ReadDir(filepath.Join(dir, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch n := strings.TrimSuffix(strings.TrimSuffix(e.Name(), "-wal"), "-shm"); n {
		case "a?b#c%d.db", "100%.db", "x#y.db", "q?mode=memory.db", "sp ace.db", "pct%3F.db":
		default:
			t.Errorf("stray file %q written", e.Name())
		}
	}
}

// Every credential-bearing part of a PostgreSQL DSN stays out of errors: the URL's
// password, password and sslpassword parameters, and key=value DSNs.
func TestOpen_errorsNeverShowCredentials(t *testing.T) {
	for _, tc := range []struct{ name, dsn, where string }{
		{"url userinfo", "postgres://warden:s3cret@127.0.0.1:1/warden?connect_timeout=2", "127.0.0.1:1"},
		{"url password parameter", "postgres://warden@127.0.0.1:1/warden?password=s3cret&connect_timeout=2", "127.0.0.1:1"},
		{"url sslpassword parameter", "postgresql://127.0.0.1:1/warden?sslpassword=s3cret&connect_timeout=2&sslmode=disable", "127.0.0.1:1"},
		{"percent-encoded password", "postgres://warden:s3%63ret@127.0.0.1:1/warden?connect_timeout=2", "127.0.0.1:1"},
		{"unparsable url", "postgres://warden:s3cret@127.0.0.1:port/warden", "PostgreSQL"},
		{"key=value", "host=127.0.0.1 port=1 user=warden password=s3cret dbname=warden connect_timeout=2", "127.0.0.1"},
		{"key=value quoted", "host=127.0.0.1 port=1 password='s3cret with space' connect_timeout=2", "127.0.0.1"},
		{"semicolon in the query", "postgres://u@127.0.0.1:1/db?sslmode=disable;password=s3cret", "127.0.0.1:1"},
		{"key=value starting with another keyword", "sslsni=1 host=127.0.0.1 port=1 password=s3cret connect_timeout=2", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			_, err := store.Open(context.Background(), tc.dsn)
			if err == nil {
				t.Fatal("no error")
			}
			// A DSN taken for a SQLite file name would leave a file named with the password.
			if ents, _ := os.ReadDir("."); len(ents) > 0 {
				t.Errorf("the DSN was opened as a SQLite file: %v", ents)
			}
			if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "s3%63ret") {
				t.Errorf("error shows the password: %v", err)
			}
			if !strings.Contains(err.Error(), tc.where) {
				t.Errorf("error %q does not name %q", err, tc.where)
			}
		})
	}
}

func TestRedactDSN(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"postgres://u:pw@h:5432/db?sslmode=disable", "postgres://u:xxxxx@h:5432/db?sslmode=disable"},
		{"postgres://u@h/db?password=pw&sslpassword=pw2", "postgres://u@h/db?password=xxxxx&sslpassword=xxxxx"},
		{"host=h password=pw dbname=d", "host=h password=xxxxx dbname=d"},
		{"postgres://u@h/db?sslmode=disable;password=pw", "postgres://u@h/db?sslmode=disable;password=xxxxx"},
		{"sslsni=1 host=h password=pw", "sslsni=1 host=h password=xxxxx"},
		{"host=h password = 'p w\\' x' dbname=d", "host=h password=xxxxx dbname=d"},
		{"/var/lib/warden/warden.db", "/var/lib/warden/warden.db"},
	} {
		if got := store.RedactDSN(tc.in); got != tc.want {
			t.Errorf("RedactDSN(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Reading the history must not create one: a misspelt --db would otherwise report an
// empty history and leave a stray file behind.
func TestOpenExisting_refusesMissingHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nowhere", "h.db")
	_, err := store.OpenExisting(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want one naming %s", err, path)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("%s was created (stat: %v)", path, err)
	}
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("%s was created (stat: %v)", filepath.Dir(path), err)
	}
	st := open(t, path)
	st.Close()
	st2, err := store.OpenExisting(context.Background(), path)
	if err != nil {
		t.Fatalf("existing history: %v", err)
	}
	st2.Close()
}

// A database file warden creates, and the -wal and -shm files SQLite makes beside it,
// are readable by their owner only, whatever the umask; a file that exists keeps its mode.
func TestOpen_createsOwnerOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "elsewhere", "warden.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.SaveScan(context.Background(), &store.ScanRecord{Snapshot: "s.json", CollectedAt: time.Now()}, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", filepath.Base(f), m)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	shared := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(shared, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o640); err != nil {
		t.Fatal(err)
	}
	st, err = store.Open(context.Background(), shared)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if fi, err := os.Stat(shared); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing database's mode changed: %v, %v", fi.Mode().Perm(), err)
	}
}

// QueryAll hands back every row as its scanner makes it, in the query's order, and the
// scanner's first error.
func TestQueryAll(t *testing.T) {
	st, err := store.Open(context.Background(), ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = st.Read(context.Background(), func(r *store.Reader) error {
		got, err := store.QueryAll(context.Background(), r, store.ScanString, `SELECT 'b' UNION ALL SELECT 'a' UNION ALL SELECT 'c'`)
		if err != nil || strings.Join(got, ",") != "b,a,c" {
			t.Errorf("QueryAll = %q, %v", got, err)
		}
		none, err := store.QueryAll(context.Background(), r, store.ScanString, `SELECT 'x' WHERE 1 = 0`)
		if err != nil || none != nil {
			t.Errorf("no rows: %q, %v", none, err)
		}
		_, err = store.QueryAll(context.Background(), r, func(*sql.Rows) (int, error) { return 0, fmt.Errorf("bad row") }, `SELECT 1`)
		if err == nil || err.Error() != "bad row" {
			t.Errorf("a scanner's error: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
