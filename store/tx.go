package store

import (
	"context"
	"database/sql"
	"fmt"
)

// Tx is a transaction other packages join, so that a state change and the audit entry
// that records it commit together or not at all. Queries use ? placeholders and SQL both
// databases speak (INSERT … RETURNING, ON CONFLICT … DO NOTHING, COALESCE); the Tx turns
// the placeholders into the database's own. Writers are serialized: a Tx holds the
// database's write lock from its start.
type Tx struct {
	tx *sql.Tx
	d  dialect
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back when it
// returns an error or panics. Transactions run one at a time across processes (SQLite's
// immediate transactions, PostgreSQL's advisory lock), so a compare-and-set inside fn
// sees no concurrent writer between its read and its write.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer sqlTx.Rollback()
	if s.d.lock != "" {
		if _, err := sqlTx.ExecContext(ctx, s.d.lock); err != nil {
			return fmt.Errorf("take the write lock: %w", err)
		}
	}
	if err := fn(&Tx{tx: sqlTx, d: s.d}); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// ExecContext runs a statement that returns no rows.
func (t *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.d.rebind(query), args...)
}

// QueryContext runs a query that returns rows.
func (t *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.d.rebind(query), args...)
}

// QueryRowContext runs a query that returns at most one row.
func (t *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.d.rebind(query), args...)
}

// Dialect names the database ("sqlite" or "postgres"), for the rare query that must
// differ; prefer SQL both speak.
func (t *Tx) Dialect() string { return t.d.name }

// Read runs fn with read access outside any write transaction: queries see committed
// data and take no lock.
func (s *Store) Read(ctx context.Context, fn func(q *Reader) error) error {
	return fn(&Reader{db: s.db, d: s.d})
}

// Reader runs read-only queries with ? placeholders.
type Reader struct {
	db *sql.DB
	d  dialect
}

// QueryContext runs a query that returns rows.
func (r *Reader) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.db.QueryContext(ctx, r.d.rebind(query), args...)
}

// QueryRowContext runs a query that returns at most one row.
func (r *Reader) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.db.QueryRowContext(ctx, r.d.rebind(query), args...)
}
