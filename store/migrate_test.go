package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// appliedMigration is one row of schema_migrations.
type appliedMigration struct {
	version   int
	name      string
	appliedAt string
}

// shippedMigrations lists the migration files of this source tree, in version order, as
// schema_migrations should record them ("0002_audit" is version 2, name "0002_audit").
func shippedMigrations(t *testing.T) []appliedMigration {
	t.Helper()
	entries, err := os.ReadDir("migrations")
	if err != nil {
		t.Fatal(err)
	}
	var out []appliedMigration
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".sql")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			t.Fatalf("migration file %s: %v", e.Name(), err)
		}
		out = append(out, appliedMigration{version: v, name: name})
	}
	slices.SortFunc(out, func(a, b appliedMigration) int { return a.version - b.version })
	if len(out) == 0 {
		t.Fatal("no migration files in store/migrations")
	}
	return out
}

// applied reads schema_migrations as the database holds it, in the order the rows come
// by version.
func applied(t *testing.T, db *sql.DB) []appliedMigration {
	t.Helper()
	rows, err := db.Query(`SELECT version, name, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []appliedMigration
	for rows.Next() {
		var m appliedMigration
		if err := rows.Scan(&m.version, &m.name, &m.appliedAt); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkEveryMigration checks that schema_migrations records every shipped migration once,
// in order, each with a parseable time.
func checkEveryMigration(t *testing.T, got []appliedMigration) {
	t.Helper()
	want := shippedMigrations(t)
	if len(got) != len(want) {
		t.Fatalf("schema_migrations holds %d rows %+v, want %d %+v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i].version != want[i].version || got[i].name != want[i].name {
			t.Errorf("schema_migrations[%d] = %d %s, want %d %s", i, got[i].version, got[i].name, want[i].version, want[i].name)
		}
		if _, err := time.Parse(time.RFC3339Nano, got[i].appliedAt); err != nil {
			t.Errorf("schema_migrations[%d].applied_at = %q: %v", i, got[i].appliedAt, err)
		}
	}
	if v := store.SchemaVersion(); v != want[len(want)-1].version {
		t.Errorf("SchemaVersion() = %d, want the newest file's %d", v, want[len(want)-1].version)
	}
}

// schemaTables are tables each migration creates, by version: after a migration, each
// can be read.
var schemaTables = map[int][]string{
	1: {"scans", "findings"},
	2: {"audit_entries", "audit_hashes", "audit_checkpoints", "audit_meta"},
	3: {"approval_requests", "approval_decisions"},
	4: {"plans", "actions", "action_events", "controls"},
}

func checkTables(t *testing.T, db *sql.DB) {
	t.Helper()
	for v, tables := range schemaTables {
		for _, table := range tables {
			var n int
			if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err != nil {
				t.Errorf("table %s of migration %d: %v", table, v, err)
			}
		}
	}
}

func TestMigrate_freshDatabaseGetsEveryMigration(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			storetest.Open(t, d)
			db, _ := storetest.RawDB(t, d)
			checkEveryMigration(t, applied(t, db))
			checkTables(t, db)
		})
	}
}

func TestMigrate_openingAgainChangesNothing(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			st, err := store.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.SaveScan(ctx, &store.ScanRecord{Snapshot: "s.json", CollectedAt: time.Now()}, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			st.Close()
			db, _ := storetest.RawDB(t, d)
			first := applied(t, db)
			checkEveryMigration(t, first)

			for range 2 {
				st, err := store.Open(ctx, d)
				if err != nil {
					t.Fatalf("open again: %v", err)
				}
				scans, err := st.Scans(ctx, 10)
				st.Close()
				if err != nil || len(scans) != 1 {
					t.Fatalf("after reopening: %d scans, %v; want the 1 saved", len(scans), err)
				}
			}
			// Same rows, applied_at included: nothing was applied again.
			if again := applied(t, db); !slices.Equal(again, first) {
				t.Errorf("schema_migrations changed on reopening:\n got %+v\nwant %+v", again, first)
			}
		})
	}
}

// Processes starting at once on a fresh database each see a migrated schema: the
// migrations run once, under the writers' lock.
func TestMigrate_concurrentOpensOfAFreshDatabase(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			if name == "sqlite" {
				// The directory is made by Open; make it first so that every opener
				// races on the database, not on mkdir.
				if err := os.MkdirAll(filepath.Dir(d), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			const n = 4
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					st, err := store.Open(ctx, d)
					if err == nil {
						_, err = st.Scans(ctx, 1)
						st.Close()
					}
					errs[i] = err
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("opener %d: %v", i, err)
				}
			}
			db, _ := storetest.RawDB(t, d)
			checkEveryMigration(t, applied(t, db))
		})
	}
}

// preMigrationSchema is the history as warden wrote it before versioned migrations
// (commit 122dfba, store.go's migrate): the two history tables and their index, no
// schema_migrations. %s is the auto-increment key's type, %s the type referencing it.
const preMigrationSchema = `CREATE TABLE IF NOT EXISTS scans (
	id %s,
	started_at TEXT NOT NULL,
	finished_at TEXT NOT NULL,
	snapshot TEXT NOT NULL,
	source TEXT NOT NULL,
	collected_at TEXT NOT NULL,
	resources INTEGER NOT NULL,
	policies INTEGER NOT NULL,
	scopes TEXT NOT NULL,
	summary TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS findings (
	scan_id %s NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
	fingerprint TEXT NOT NULL,
	policy TEXT NOT NULL,
	severity TEXT NOT NULL,
	resource TEXT NOT NULL,
	resource_type TEXT NOT NULL,
	account TEXT NOT NULL,
	region TEXT NOT NULL,
	scope TEXT NOT NULL,
	status TEXT NOT NULL,
	first_seen TEXT NOT NULL,
	data TEXT NOT NULL,
	PRIMARY KEY (scan_id, fingerprint)
);
CREATE INDEX IF NOT EXISTS findings_resource ON findings(resource)`

func TestMigrate_adoptsAPreMigrationDatabase(t *testing.T) {
	ctx := context.Background()
	collected := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	old := finding("WARDEN-AWS-IAM-001", "arn:aws:iam::1:user/old", "aws:1")
	old.FirstSeen = collected
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			db, dialect := rawDB(t, d)
			serial, ref, ph := "INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER", func(int) string { return "?" }
			if dialect == "postgres" {
				serial, ref, ph = "BIGSERIAL PRIMARY KEY", "BIGINT", func(i int) string { return fmt.Sprintf("$%d", i) }
			}
			for _, q := range strings.Split(fmt.Sprintf(preMigrationSchema, serial, ref), ";\n") {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("old layout: %v\n%s", err, q)
				}
			}
			ts := collected.Format(time.RFC3339Nano)
			var id int64
			if err := db.QueryRow(`INSERT INTO scans (started_at, finished_at, snapshot, source, collected_at, resources, policies, scopes, summary)
				VALUES (`+ph(1)+`, `+ph(2)+`, 'old.json', 'aws', `+ph(3)+`, 7, 43, '{"aws:1":"complete"}', '{"total":1}') RETURNING id`,
				ts, ts, ts).Scan(&id); err != nil {
				t.Fatalf("old scan row: %v", err)
			}
			data, err := json.Marshal(old)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(`INSERT INTO findings (scan_id, fingerprint, policy, severity, resource, resource_type, account, region, scope, status, first_seen, data)
				VALUES (`+ph(1)+`, `+ph(2)+`, `+ph(3)+`, 'high', `+ph(4)+`, '', '1', '', 'aws:1', 'open', `+ph(5)+`, `+ph(6)+`)`,
				id, old.Fingerprint, old.Policy, old.Resource, ts, string(data)); err != nil {
				t.Fatalf("old finding row: %v", err)
			}

			st := storetest.Open(t, d)
			checkEveryMigration(t, applied(t, db))
			checkTables(t, db)
			scans, err := st.Scans(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(scans) != 1 {
				t.Fatalf("adopted history holds %d scans, want the old one", len(scans))
			}
			s := scans[0]
			if s.ID != id || s.Snapshot != "old.json" || s.Source != "aws" || !s.CollectedAt.Equal(collected) || s.Resources != 7 ||
				s.Policies != 43 || s.Scopes["aws:1"] != "complete" || string(s.Summary) != `{"total":1}` {
				t.Errorf("old scan read back as %+v", s)
			}
			fs, err := st.Findings(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != 1 || fs[0].Fingerprint != old.Fingerprint || !fs[0].FirstSeen.Equal(collected) {
				t.Fatalf("old findings read back as %+v", fs)
			}

			// The adopted history goes on: the next scan sees the old finding again and
			// keeps its first_seen.
			next := &store.ScanRecord{Snapshot: "new.json", CollectedAt: collected.Add(24 * time.Hour)}
			newID, stored, err := st.SaveScan(ctx, next, []findings.Finding{finding("WARDEN-AWS-IAM-001", "arn:aws:iam::1:user/old", "aws:1")}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if newID <= id || len(stored) != 1 || !stored[0].FirstSeen.Equal(collected) {
				t.Errorf("scan after adoption: id %d (old %d), findings %+v", newID, id, stored)
			}
		})
	}
}

// placeholders maps the migrations' portable types to each database's, as the store
// renders them.
var placeholders = map[string]*strings.Replacer{
	"sqlite":   strings.NewReplacer("{{serial}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{bigint}}", "INTEGER", "{{blob}}", "BLOB"),
	"postgres": strings.NewReplacer("{{serial}}", "BIGSERIAL PRIMARY KEY", "{{bigint}}", "BIGINT", "{{blob}}", "BYTEA"),
}

// oldApplied is the applied_at of the versions applyShipped records, so that a later
// open that applied them again shows.
const oldApplied = "2026-01-02T03:04:05Z"

// applyShipped brings an empty database to version upTo as a warden of that version
// left it: the shipped migration files up to it, run as written, and schema_migrations
// recording them.
func applyShipped(t *testing.T, db *sql.DB, dialect string, upTo int) {
	t.Helper()
	if _, err := db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, m := range shippedMigrations(t) {
		if m.version > upTo {
			break
		}
		b, err := os.ReadFile(filepath.Join("migrations", m.name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		var stmt strings.Builder
		for line := range strings.SplitSeq(placeholders[dialect].Replace(string(b)), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--") {
				continue
			}
			stmt.WriteString(line + "\n")
			if strings.HasSuffix(strings.TrimSpace(line), ";") {
				if _, err := db.Exec(stmt.String()); err != nil {
					t.Fatalf("%s: %v\n%s", m.name, err, stmt.String())
				}
				stmt.Reset()
			}
		}
		if strings.TrimSpace(stmt.String()) != "" {
			if _, err := db.Exec(stmt.String()); err != nil {
				t.Fatalf("%s: %v\n%s", m.name, err, stmt.String())
			}
		}
		q := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
		if dialect == "postgres" {
			q = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
		}
		if _, err := db.Exec(q, m.version, m.name, oldApplied); err != nil {
			t.Fatal(err)
		}
	}
}

// rawDB opens the empty database of dsn directly (making the SQLite file's directory).
func rawDB(t *testing.T, dsn string) (*sql.DB, string) {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres") {
		if err := os.MkdirAll(filepath.Dir(dsn), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return storetest.RawDB(t, dsn)
}

// A database at an older version gets the migrations it lacks, and only those.
func TestMigrate_upgradesFromAnOlderVersion(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			db, dialect := rawDB(t, d)
			applyShipped(t, db, dialect, 2)
			if _, err := db.Exec(`INSERT INTO audit_meta (name, value) VALUES ('kept', 'yes')`); err != nil {
				t.Fatal(err)
			}

			storetest.Open(t, d)
			after := applied(t, db)
			checkEveryMigration(t, after)
			checkTables(t, db)
			for _, m := range after[:2] {
				if m.appliedAt != oldApplied {
					t.Errorf("version %d was applied again (applied_at %s)", m.version, m.appliedAt)
				}
			}
			for _, m := range after[2:] {
				if m.appliedAt == oldApplied {
					t.Errorf("version %d was not applied", m.version)
				}
			}
			var v string
			if err := db.QueryRow(`SELECT value FROM audit_meta WHERE name = 'kept'`).Scan(&v); err != nil || v != "yes" {
				t.Errorf("a version 2 row after upgrading: %q, %v", v, err)
			}
		})
	}
}

// A migration that fails leaves the database as it was: no later version applied, none
// recorded, and the error names the migration.
func TestMigrate_failedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			db, dialect := rawDB(t, d)
			applyShipped(t, db, dialect, 1)
			// A table in the way of migration 0002's first one.
			if _, err := db.Exec(`CREATE TABLE audit_entries (seq INTEGER PRIMARY KEY)`); err != nil {
				t.Fatal(err)
			}

			st, err := store.Open(ctx, d)
			if err == nil {
				st.Close()
				t.Fatal("open succeeded although migration 0002 cannot create audit_entries")
			}
			if !strings.Contains(err.Error(), "0002_audit") {
				t.Errorf("error %q does not name the failed migration 0002_audit", err)
			}
			got := applied(t, db)
			if len(got) != 1 || got[0].version != 1 || got[0].appliedAt != oldApplied {
				t.Errorf("after the failed migration schema_migrations holds %+v, want version 1 only", got)
			}
			for _, table := range append(slices.Clone(schemaTables[2][1:]), schemaTables[3]...) {
				var n int
				if err := db.QueryRow(`SELECT COUNT(*) FROM ` + table).Scan(&n); err == nil {
					t.Errorf("table %s exists: a failed open applied migrations in part", table)
				}
			}
		})
	}
}

func TestMigrate_refusesANewerSchema(t *testing.T) {
	ctx := context.Background()
	known := store.SchemaVersion()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			st, err := store.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			db, dialect := storetest.RawDB(t, d)
			q := `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`
			if dialect == "postgres" {
				q = `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`
			}
			future := known + 3
			if _, err := db.Exec(q, future, fmt.Sprintf("%04d_from_the_future", future), time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
				t.Fatal(err)
			}
			before := applied(t, db)

			st, err = store.Open(ctx, d)
			if err == nil {
				st.Close()
				t.Fatalf("open of a database at version %d succeeded; this warden knows %d", future, known)
			}
			msg := err.Error()
			for _, want := range []string{fmt.Sprintf("schema version %d", future), fmt.Sprintf("(%d)", known), "upgrade warden"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if _, err := store.OpenExisting(ctx, d); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("schema version %d", future)) {
				t.Errorf("OpenExisting: %v, want the same refusal", err)
			}
			if after := applied(t, db); !slices.Equal(after, before) {
				t.Errorf("the refused open changed schema_migrations: %+v, was %+v", after, before)
			}
		})
	}
}

// A recorded version missing below the newest (a hand-edited schema_migrations) is
// refused: the schema is not one warden made, and migrating on top of it would hide that.
func TestMigrate_refusesAGapInTheRecordedVersions(t *testing.T) {
	ctx := context.Background()
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			d := dsn(t)
			st, err := store.Open(ctx, d)
			if err != nil {
				t.Fatal(err)
			}
			st.Close()
			db, _ := storetest.RawDB(t, d)
			if _, err := db.Exec(`DELETE FROM schema_migrations WHERE version = 3`); err != nil {
				t.Fatal(err)
			}
			st, err = store.Open(ctx, d)
			if err == nil {
				st.Close()
				t.Fatal("a database missing version 3 opened")
			}
			if !strings.Contains(err.Error(), "versions are missing") {
				t.Errorf("error %q, want it to say versions are missing", err)
			}
		})
	}
}
