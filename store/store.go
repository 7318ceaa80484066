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
}

// dialect isolates what differs between databases.
type dialect struct {
	name   string
	serial string // the auto-increment primary key column type
	ref    string // the type of a column referencing it
	// rebind turns ? placeholders into the database's own.
	rebind func(string) string
	// lock, run first in a transaction, serializes writers across processes; SQLite
	// needs none (it has one writer at a time).
	lock string
}

var sqliteDialect = dialect{name: "sqlite", serial: "INTEGER PRIMARY KEY AUTOINCREMENT", ref: "INTEGER", rebind: func(q string) string { return q }}

// historyLock is the PostgreSQL advisory lock key of warden's history ("wardenhs").
const historyLock = 0x77617264656e6873

var postgresDialect = dialect{name: "postgres", serial: "BIGSERIAL PRIMARY KEY", ref: "BIGINT", rebind: dollarParams,
	lock: fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", historyLock)}

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
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if path == ":memory:" {
		db.SetMaxOpenConns(1)
	}
	s := &Store{db: db, d: sqliteDialect}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	return s, nil
}

// sqlitePragmas are set on every connection. _txlock=immediate: a transaction takes the
// write lock when it begins, so that two processes saving scans at once wait their turn
// (busy_timeout) instead of failing when the one that read first tries to write.
const sqlitePragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"

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
	s := &Store{db: db, d: postgresDialect}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fail(err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	// Two processes starting at once must not both create the tables.
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	stmts := []string{
		`CREATE TABLE IF NOT EXISTS scans (
			id ` + s.d.serial + `,
			started_at TEXT NOT NULL,
			finished_at TEXT NOT NULL,
			snapshot TEXT NOT NULL,
			source TEXT NOT NULL,
			collected_at TEXT NOT NULL,
			resources INTEGER NOT NULL,
			policies INTEGER NOT NULL,
			scopes TEXT NOT NULL,
			summary TEXT NOT NULL
		)`,
		`CREATE TABLE IF NOT EXISTS findings (
			scan_id ` + s.d.ref + ` NOT NULL REFERENCES scans(id) ON DELETE CASCADE,
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
		)`,
		`CREATE INDEX IF NOT EXISTS findings_resource ON findings(resource)`,
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

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
	if errored == nil {
		errored = func(string, string) bool { return false }
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, nil, fmt.Errorf("save scan: %w", err)
	}
	defer tx.Rollback()
	// Scans saved at once by several processes must each carry over from the one before.
	if s.d.lock != "" {
		if _, err := tx.ExecContext(ctx, s.d.lock); err != nil {
			return 0, nil, fmt.Errorf("save scan: %w", err)
		}
	}

	prevID, prev, err := s.latest(ctx, tx)
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
	err = tx.QueryRowContext(ctx, s.d.rebind(`INSERT INTO scans (started_at, finished_at, snapshot, source, collected_at, resources, policies, scopes, summary)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
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
		for _, f := range prev {
			if !seen[f.Fingerprint] && (!complete(f.Scope) || errored(f.Policy, f.Resource)) {
				f.Status = findings.StatusUnknown
				seen[f.Fingerprint] = true
				out = append(out, f)
			}
		}
	}
	stmt, err := tx.PrepareContext(ctx, s.d.rebind(`INSERT INTO findings (scan_id, fingerprint, policy, severity, resource, resource_type, account, region, scope, status, first_seen, data)
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
	if err := tx.Commit(); err != nil {
		return 0, nil, fmt.Errorf("save scan: %w", err)
	}
	rec.ID = id
	return id, out, nil
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) latest(ctx context.Context, q querier) (int64, []findings.Finding, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM scans ORDER BY id DESC LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	fs, err := s.findings(ctx, q, id)
	return id, fs, err
}

// Scans returns up to limit scans, newest first.
func (s *Store) Scans(ctx context.Context, limit int) ([]ScanRecord, error) {
	rows, err := s.db.QueryContext(ctx, s.d.rebind(`SELECT id, started_at, finished_at, snapshot, source, collected_at, resources, policies, scopes, summary
		FROM scans ORDER BY id DESC LIMIT ?`), limit)
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
		r.StartedAt, r.FinishedAt, r.CollectedAt = parseTS(started), parseTS(finished), parseTS(collected)
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
	fs, err := s.findings(ctx, s.db, scanID)
	if err != nil {
		return nil, fmt.Errorf("read findings of scan %d: %w", scanID, err)
	}
	return fs, nil
}

func (s *Store) findings(ctx context.Context, q querier, scanID int64) ([]findings.Finding, error) {
	rows, err := q.QueryContext(ctx, s.d.rebind(`SELECT data FROM findings WHERE scan_id = ?`), scanID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []findings.Finding
	for rows.Next() {
		var data string
		if err := rows.Scan(&data); err != nil {
			return nil, err
		}
		var f findings.Finding
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			return nil, fmt.Errorf("decode finding: %w", err)
		}
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

func parseTS(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

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
		&f.Message, &f.Key, &f.Target, &f.Remediation.Action, &f.Remediation.Risk, &f.Status} {
		*p = findings.ValidText(*p)
	}
	if f.Waiver != nil {
		w := *f.Waiver
		w.Owner, w.Reason = findings.ValidText(w.Owner), findings.ValidText(w.Reason)
		f.Waiver = &w
	}
}
