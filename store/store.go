// Package store keeps warden's scan history. SQLite (pure Go, a file) is the embedded
// default; PostgreSQL (a postgres:// URL) serves several warden processes sharing one
// history. The SQL is written once, with the few dialect differences behind a small
// dialect type.
package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver

	"github.com/warden-sec/warden/findings"
)

// ErrNoScans is returned when the history holds fewer scans than asked for.
var ErrNoScans = errors.New("not enough scans in the history")

// Store is a scan history database. It is safe for concurrent use.
type Store struct {
	db *sql.DB
	d  dialect
	// uri is the SQLite file's URI, dsn the PostgreSQL DSN: how another pool on the same
	// database is opened (OpenSQLitePool, PostgresPoolConfig). Never printed.
	uri, dsn string
	// holds are Hold's locks on SQLite.
	holds holds
	// w queues this process's SQLite transactions, urgent ones first.
	w writer
}

// dialect isolates what differs between databases.
type dialect struct {
	name   string
	serial string // the auto-increment primary key column type
	ref    string // a 64-bit integer: the type of a column referencing the key
	blob   string // bytes
	// rebind turns ? placeholders into the database's own.
	rebind func(string) string
	// lock, run first in a transaction, serializes writers across processes; SQLite
	// needs none (it has one writer at a time). sharedLock is its shared form, taken by
	// partitioned transactions (InTxOn), and keyLock takes the lock of one key ($1).
	lock, sharedLock, keyLock string
	// schema is the PostgreSQL schema the store lives in: advisory locks are the
	// database's, so each schema's keys are its own (see withSchema).
	schema string
}

var sqliteDialect = dialect{name: "sqlite", serial: "INTEGER PRIMARY KEY AUTOINCREMENT", ref: "INTEGER", blob: "BLOB", rebind: func(q string) string { return q }}

// historyLock is the PostgreSQL advisory lock key of warden's history ("wardenhs").
const historyLock = 0x77617264656e6873

var postgresDialect = dialect{name: "postgres", serial: "BIGSERIAL PRIMARY KEY", ref: "BIGINT", blob: "BYTEA", rebind: dollarParams,
	keyLock: "SELECT pg_advisory_xact_lock($1)"}

// withSchema is the PostgreSQL dialect of a store in schema. Advisory locks belong to the
// database, not the schema: two stores in two schemas of one database (two deployments,
// or two tests) would otherwise wait on each other's writers. The default schema keeps
// the key warden has always used, so that replicas of an older version, during a
// rolling upgrade, still exclude the new ones.
func (d dialect) withSchema(schema string) dialect {
	key := int64(historyLock)
	if schema != "public" {
		key = lockKey(schema, "store", "writers")
	}
	d.schema = schema
	d.lock = fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", key)
	d.sharedLock = fmt.Sprintf("SELECT pg_advisory_xact_lock_shared(%d)", key)
	return d
}

// dollarParams turns ? placeholders into PostgreSQL's $1, $2, …; warden's queries hold
// no ? inside string literals.
func dollarParams(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ScanRecord is one stored scan.
type ScanRecord struct {
	ID          int64     `json:"id"`
	StartedAt   time.Time `json:"started_at"`
	FinishedAt  time.Time `json:"finished_at"`
	Snapshot    string    `json:"snapshot"`
	Source      string    `json:"source,omitempty"`
	CollectedAt time.Time `json:"collected_at"`
	Resources   int       `json:"resources"`
	Policies    int       `json:"policies"`
	// Scopes maps each scope id of the snapshot to its status.
	Scopes map[string]string `json:"scopes,omitempty"`
	// Summary is the scan's summary as reported, kept verbatim.
	Summary json.RawMessage `json:"summary,omitempty"`
}

// DefaultPath is where the history lives when no --db is given:
// $XDG_STATE_HOME/warden/warden.db, or ~/.local/state/warden/warden.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "warden", "warden.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the state directory: %w", err)
	}
	return filepath.Join(home, ".local", "state", "warden", "warden.db"), nil
}

// Open opens (and creates or migrates) the history at dsn: a SQLite file path,
// optionally prefixed with sqlite://, or a PostgreSQL URL (postgres://user@host/db) or
// key=value DSN (host=… dbname=…). Errors never show the DSN's credentials.
func Open(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, true)
}

// OpenExisting opens a history that must already exist: a missing SQLite file is an
// error (wrapping fs.ErrNotExist) and is not created, so that reading the history of a
// misspelt path neither reports an empty history nor leaves a file behind.
func OpenExisting(ctx context.Context, dsn string) (*Store, error) {
	return open(ctx, dsn, false)
}

func open(ctx context.Context, dsn string, create bool) (*Store, error) {
	if isPostgres(dsn) {
		return openPostgres(ctx, dsn)
	}
	path := strings.TrimPrefix(dsn, "sqlite://")
	if path == "" {
		return nil, errors.New("open store: empty SQLite path")
	}
	uri, err := sqliteURI(path)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if path != ":memory:" {
		if create {
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return nil, fmt.Errorf("open store %s: %w", path, err)
			}
			if err := createOwnerOnly(path); err != nil {
				return nil, fmt.Errorf("open store %s: %w", path, err)
			}
		} else {
			if _, err := os.Stat(path); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("open store %s: no scan history there (warden scan records one): %w", path, fs.ErrNotExist)
				}
				return nil, fmt.Errorf("open store %s: %w", path, err)
			}
			// mode=rw: should the file vanish between the check and the open, SQLite
			// fails instead of creating an empty one.
			uri += "&mode=rw"
		}
	}
	db, err := openCachedSQLite(uri)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1)
	}
	// database/sql keeps 2 idle connections by default: a daemon reading from many
	// goroutines closed and opened connections all day, each open setting the pragmas
	// anew and losing the statements its connection had prepared.
	db.SetMaxIdleConns(sqliteIdleConns)
	s := &Store{db: db, d: sqliteDialect, uri: uri}
	if err := s.migrateSQLite(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// createOwnerOnly creates the database file empty (an empty file is an empty SQLite
// database) and readable by its owner only, unless it exists. SQLite gives the -wal and
// -shm files it makes beside it the database file's mode, so the history, its audit log
// and its approvals are never readable by other users, whatever the umask.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// migrateSQLite migrates, waiting out the one lock SQLite's busy timeout does not: a
// fresh file that another process is turning into WAL mode at the same moment answers
// SQLITE_BUSY at once. It tries again for up to 10 seconds.
func (s *Store) migrateSQLite(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, 500*time.Millisecond) {
		err := s.migrate(ctx)
		if err == nil || !strings.Contains(err.Error(), "SQLITE_BUSY") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// sqliteIdleConns is how many idle connections the store's SQLite pool keeps open.
const sqliteIdleConns = 16

// sqlitePragmas are set on every connection. _txlock=immediate: a transaction takes the
// write lock when it begins, so that two processes saving scans at once wait their turn
// (busy_timeout) instead of failing when the one that read first tries to write.
//
// wal_autocheckpoint(4000): the WAL is copied into the database every 4,000 pages (16 MB)
// instead of SQLite's 1,000. A page that many transactions change (an index's, the job
// queue's) is copied once a checkpoint; at 1,000 pages, checkpoints were 4.4% of a
// replica's CPU over the first sweep of 500 accounts.
const sqlitePragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_pragma=wal_autocheckpoint(4000)&_txlock=immediate"

// sqliteURI is the driver's name for the database file at path: a file: URI whose path
// is percent-escaped, so that ?, # and % in a file name stay part of the name instead of
// starting SQLite's query or fragment or an escape (each of which opens another file).
func sqliteURI(path string) (string, error) {
	if path == ":memory:" {
		return "file::memory:?" + sqlitePragmas, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}
	return u.String() + "?" + sqlitePragmas, nil
}

func openPostgres(ctx context.Context, dsn string) (*Store, error) {
	secrets := dsnSecrets(dsn)
	where := scrub(errors.New(RedactDSN(dsn)), secrets).Error()
	fail := func(err error) error {
		return fmt.Errorf("open store %s: %w", where, scrub(err, secrets))
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fail(err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fail(err)
	}
	var schema sql.NullString
	if err := db.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil || !schema.Valid {
		db.Close()
		if err == nil {
			err = errors.New("no schema: the search_path names none that exists")
		}
		return nil, fail(fmt.Errorf("read the current schema: %w", err))
	}
	s := &Store{db: db, d: postgresDialect.withSchema(schema.String), dsn: dsn}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fail(err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// SaveScan stores a scan and its findings in one transaction. A finding of the previous
// scan that this scan did not see again is carried over with status unknown when this
// scan could not judge it: its scope was not read completely (complete returns false),
// or evaluating its policy on its resource failed (errored returns true; nil means no
// evaluation failed). Neither a failed scope nor a failed policy ever resolves findings.
// errored is called with the stored finding's policy and resource, which are valid text
// (findings.ValidText). Text that is not valid UTF-8, or holds NUL, is stored with
// U+FFFD in place of each bad byte. It returns the new scan's id and the findings as
// stored, carried ones included, with FirstSeen set.
func (s *Store) SaveScan(ctx context.Context, rec *ScanRecord, fs []findings.Finding, complete func(scope string) bool, errored func(policy, resource string) bool) (int64, []findings.Finding, error) {
	var id int64
	var out []findings.Finding
	err := s.InTx(ctx, func(tx *Tx) error {
		var err error
		id, out, err = tx.SaveScan(ctx, rec, fs, complete, errored)
		return err
	})
	if err != nil {
		return 0, nil, err
	}
	return id, out, nil
}

// SaveScan is Store.SaveScan inside a transaction the caller commits, so that the scan
// and the audit entries recording it are one change. rec.ID is set on return; the scan
// exists only once the caller's transaction commits.
func (t *Tx) SaveScan(ctx context.Context, rec *ScanRecord, fs []findings.Finding, complete func(scope string) bool, errored func(policy, resource string) bool) (int64, []findings.Finding, error) {
	prevID, prev, err := latest(ctx, t)
	if err != nil {
		return 0, nil, fmt.Errorf("save scan: %w", err)
	}
	cleanRecord(rec)
	scopes, _ := json.Marshal(rec.Scopes)
	summary := rec.Summary
	if summary == nil {
		summary = json.RawMessage("{}")
	}
	var id int64
	err = t.QueryRowContext(ctx, `INSERT INTO scans (started_at, finished_at, snapshot, source, collected_at, resources, policies, scopes, summary)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		ts(rec.StartedAt), ts(rec.FinishedAt), rec.Snapshot, rec.Source, ts(rec.CollectedAt), rec.Resources, rec.Policies,
		string(scopes), string(summary)).Scan(&id)
	if err != nil {
		return 0, nil, fmt.Errorf("save scan: %w", err)
	}
	firstSeen := map[string]time.Time{}
	for _, f := range prev {
		firstSeen[f.Fingerprint] = f.FirstSeen
	}
	seen := make(map[string]bool, len(fs))
	out := make([]findings.Finding, 0, len(fs))
	for _, f := range fs {
		cleanFinding(&f)
		if seen[f.Fingerprint] {
			continue
		}
		seen[f.Fingerprint] = true
		if t, ok := firstSeen[f.Fingerprint]; ok {
			f.FirstSeen = t
		} else {
			f.FirstSeen = rec.CollectedAt
		}
		out = append(out, f)
	}
	if prevID != 0 {
		out = append(out, findings.CarryOver(prev, func(fp string) bool { return seen[fp] }, complete, errored)...)
	}
	stmt, err := t.tx.PrepareContext(ctx, t.d.rebind(`INSERT INTO findings (scan_id, fingerprint, policy, severity, resource, resource_type, account, region, scope, status, first_seen, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`))
	if err != nil {
		return 0, nil, fmt.Errorf("save scan: %w", err)
	}
	defer stmt.Close()
	for i := range out {
		f := &out[i]
		data, err := json.Marshal(f)
		if err != nil {
			return 0, nil, fmt.Errorf("save finding %s: %w", f.Fingerprint, err)
		}
		if _, err := stmt.ExecContext(ctx, id, f.Fingerprint, f.Policy, f.Severity.String(), f.Resource, f.ResourceType,
			f.Account, f.Region, f.Scope, f.Status, ts(f.FirstSeen), string(data)); err != nil {
			return 0, nil, fmt.Errorf("save finding %s: %w", f.Fingerprint, err)
		}
	}
	rec.ID = id
	return id, out, nil
}

// SetScanSummary replaces the summary of scan id: the scan's report counts the
// findings SaveScan carried over, which are known only once it has saved them.
func (t *Tx) SetScanSummary(ctx context.Context, id int64, summary json.RawMessage) error {
	res, err := t.ExecContext(ctx, `UPDATE scans SET summary = ? WHERE id = ?`, string(summary), id)
	if err != nil {
		return fmt.Errorf("save the summary of scan %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n != 1 {
		return fmt.Errorf("save the summary of scan %d: no such scan", id)
	}
	return nil
}

// LatestFindings returns the id and findings of the latest scan inside the transaction
// (0 and none when there is no scan yet): what the next SaveScan compares with.
func (t *Tx) LatestFindings(ctx context.Context) (int64, []findings.Finding, error) {
	id, fs, err := latest(ctx, t)
	if err != nil {
		return 0, nil, fmt.Errorf("read the latest scan: %w", err)
	}
	return id, fs, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func latest(ctx context.Context, q querier) (int64, []findings.Finding, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM scans ORDER BY id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	fs, err := readFindings(ctx, q, id)
	return id, fs, err
}

// Scans returns up to limit scans, newest first.
func (s *Store) Scans(ctx context.Context, limit int) ([]ScanRecord, error) {
	q := &Reader{db: s.db, d: s.d}
	rows, err := q.QueryContext(ctx, `SELECT id, started_at, finished_at, snapshot, source, collected_at, resources, policies, scopes, summary
		FROM scans ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("list scans: %w", err)
	}
	defer rows.Close()
	var out []ScanRecord
	for rows.Next() {
		var r ScanRecord
		var started, finished, collected, scopes, summary string
		if err := rows.Scan(&r.ID, &started, &finished, &r.Snapshot, &r.Source, &collected, &r.Resources, &r.Policies, &scopes, &summary); err != nil {
			return nil, fmt.Errorf("list scans: %w", err)
		}
		for _, c := range []struct {
			name string
			text string
			to   *time.Time
		}{{"started_at", started, &r.StartedAt}, {"finished_at", finished, &r.FinishedAt}, {"collected_at", collected, &r.CollectedAt}} {
			t, err := ParseTime(c.text)
			if err != nil {
				return nil, fmt.Errorf("list scans: scan %d: %s: %w", r.ID, c.name, err)
			}
			*c.to = t
		}
		if err := json.Unmarshal([]byte(scopes), &r.Scopes); err != nil {
			return nil, fmt.Errorf("list scans: scan %d: scopes: %w", r.ID, err)
		}
		r.Summary = json.RawMessage(summary)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Findings returns the findings stored for a scan, in report order.
func (s *Store) Findings(ctx context.Context, scanID int64) ([]findings.Finding, error) {
	fs, err := readFindings(ctx, &Reader{db: s.db, d: s.d}, scanID)
	if err != nil {
		return nil, fmt.Errorf("read findings of scan %d: %w", scanID, err)
	}
	return fs, nil
}

func readFindings(ctx context.Context, q querier, scanID int64) ([]findings.Finding, error) {
	rows, err := q.QueryContext(ctx, `SELECT fingerprint, first_seen, data FROM findings WHERE scan_id = ?`, scanID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []findings.Finding
	for rows.Next() {
		var fp, firstSeen, data string
		if err := rows.Scan(&fp, &firstSeen, &data); err != nil {
			return nil, err
		}
		var f findings.Finding
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			return nil, fmt.Errorf("decode finding %s: %w", fp, err)
		}
		t, err := ParseTime(firstSeen)
		if err != nil {
			return nil, fmt.Errorf("finding %s: first_seen: %w", fp, err)
		}
		f.FirstSeen = t
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	findings.Sort(out)
	return out, nil
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// ParseTime reads a time as the store writes it (RFC 3339, UTC): the empty text is the
// zero time; anything else that does not parse is an error, never a zero value that
// would pass for "never".
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q is not RFC 3339", s)
	}
	return t, nil
}

// FormatTime writes a time as the store keeps it: RFC 3339 in UTC with nanoseconds; the
// zero time is the empty text.
func FormatTime(t time.Time) string { return ts(t) }

// cleanRecord makes a scan record's text valid for every database (findings.ValidText).
func cleanRecord(rec *ScanRecord) {
	rec.Snapshot, rec.Source = findings.ValidText(rec.Snapshot), findings.ValidText(rec.Source)
	if len(rec.Scopes) > 0 {
		scopes := make(map[string]string, len(rec.Scopes))
		for k, v := range rec.Scopes {
			scopes[findings.ValidText(k)] = findings.ValidText(v)
		}
		rec.Scopes = scopes
	}
}

// cleanFinding makes a finding's text valid for every database: PostgreSQL refuses
// invalid UTF-8 and NUL in text columns, and a resource's uid or name may hold either.
// Details are left to encoding/json, which cleans them the same way.
func cleanFinding(f *findings.Finding) {
	for _, p := range []*string{&f.Policy, &f.Title, &f.Resource, &f.ResourceType, &f.Account, &f.Region, &f.Scope,
		&f.Message, &f.Key, &f.Target, &f.Remediation.Action, &f.Status} {
		*p = findings.ValidText(*p)
	}
	if f.Waiver != nil {
		w := *f.Waiver
		w.Owner, w.Reason = findings.ValidText(w.Owner), findings.ValidText(w.Reason)
		f.Waiver = &w
	}
}
