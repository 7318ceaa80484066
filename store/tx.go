package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
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
	// partitioned is a transaction of InTxOn on PostgreSQL: it shares the store with
	// others of other partitions, so what every writer shares (the audit log's sequence)
	// is taken with Serialize.
	partitioned bool
	held        map[string]bool
}

// InTx runs fn in one transaction: committed when fn returns nil, rolled back when it
// returns an error or panics. Transactions run one at a time across processes (SQLite's
// immediate transactions, PostgreSQL's advisory lock), so a compare-and-set inside fn
// sees no concurrent writer between its read and its write.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	if s.d.lock == "" {
		if err := s.w.lock(ctx); err != nil {
			return fmt.Errorf("wait for the store's writer: %w", err)
		}
		defer s.w.unlock()
	}
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

// InTxOn runs fn in one transaction, as InTx does, serialized only with the
// transactions of the same partition and with InTx's: on PostgreSQL, transactions of
// different partitions (a scope's observation and another's) commit side by side. fn must
// touch only its partition's rows, plus what it takes with Tx.Serialize (the audit log
// does). On SQLite, which has one writer at a time, it is InTx.
//
// Locks are taken in one order — the store's (shared), the partition's, then whatever
// Serialize names — so two such transactions cannot wait on each other.
func (s *Store) InTxOn(ctx context.Context, partition string, fn func(tx *Tx) error) error {
	if s.d.lock == "" {
		return s.InTx(ctx, fn)
	}
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer sqlTx.Rollback()
	if _, err := sqlTx.ExecContext(ctx, s.d.sharedLock); err != nil {
		return fmt.Errorf("take the store's shared lock: %w", err)
	}
	if _, err := sqlTx.ExecContext(ctx, s.d.keyLock, lockKey(s.d.schema, "partition", partition)); err != nil {
		return fmt.Errorf("take the lock of %s: %w", partition, err)
	}
	if err := fn(&Tx{tx: sqlTx, d: s.d, partitioned: true}); err != nil {
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// Serialize makes the rest of the transaction run alone among those that Serialize the
// same name, until it commits: the audit log takes "audit" before it reads the sequence's
// next number. In an InTx transaction, which already runs alone, it does nothing. Take it
// last: a transaction that holds a Serialize lock takes no other.
func (t *Tx) Serialize(ctx context.Context, name string) error {
	if !t.partitioned || t.held[name] {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, t.d.keyLock, lockKey(t.d.schema, "serialize", name)); err != nil {
		return fmt.Errorf("take the lock of %s: %w", name, err)
	}
	if t.held == nil {
		t.held = map[string]bool{}
	}
	t.held[name] = true
	return nil
}

// lockKey is the advisory lock key of a name in a namespace of a schema's store: 64
// bits of its SHA-256, never the key of the default schema's writers.
func lockKey(schema, namespace, name string) int64 {
	sum := sha256.Sum256([]byte("warden/" + schema + "/" + namespace + "/" + name))
	k := int64(binary.BigEndian.Uint64(sum[:8]))
	if k == historyLock {
		k++
	}
	return k
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

// Querier is a Tx or a Reader: what the owner of a table takes in the functions others
// read it with, so a caller reads inside its own transaction or outside any.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
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

// QueryAll runs query on q and returns each row as scan makes it, in the order the
// query gives: the one rows loop (close, scan, err) the owners of tables share.
func QueryAll[T any](ctx context.Context, q Querier, scan func(*sql.Rows) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// ScanString scans a row of one string column, for QueryAll.
func ScanString(rows *sql.Rows) (string, error) {
	var s string
	err := rows.Scan(&s)
	return s, err
}
