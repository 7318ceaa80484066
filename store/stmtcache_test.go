package store

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// cachedDB opens a one-connection pool of openCachedSQLite on a new file.
func cachedDB(t *testing.T) *sql.DB {
	t.Helper()
	uri, err := sqliteURI(filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := openCachedSQLite(uri)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db
}

// cachedOf is the pool's one connection's cache: the queries it keeps prepared.
func cachedOf(t *testing.T, db *sql.DB) (queries []string) {
	t.Helper()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*cachedConn)
		if !ok {
			return fmt.Errorf("the pool's connection is a %T", dc)
		}
		for e := c.lru.Front(); e != nil; e = e.Next() {
			queries = append(queries, e.Value.(*cachedStmt).query)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return queries
}

func count(t *testing.T, db *sql.DB) (n int) {
	t.Helper()
	if err := db.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCachedSQLite_preparesWhatRunsTwice(t *testing.T) {
	ctx := context.Background()
	db := cachedDB(t)
	const ins = `INSERT INTO t (k, v) VALUES (?, ?)`
	for i := range 5 {
		if _, err := db.ExecContext(ctx, ins, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	const sel = `SELECT v FROM t WHERE k = ?`
	for i := range 5 {
		var v string
		if err := db.QueryRowContext(ctx, sel, i).Scan(&v); err != nil || v != fmt.Sprint("v", i) {
			t.Fatalf("row %d: %q, %v", i, v, err)
		}
	}
	got := cachedOf(t, db)
	if len(got) != 2 || got[0] != sel || got[1] != ins {
		t.Errorf("kept prepared: %q, want the select then the insert", got)
	}
	if n := count(t, db); n != 5 {
		t.Errorf("%d rows, want 5", n)
	}
	// Run once: not kept.
	if kept := cachedOf(t, db); len(kept) != 2 {
		t.Errorf("kept %d statements after a query run once", len(kept))
	}
}

// A query run again while its own rows are open is not run on the busy statement: both
// result sets come out whole.
func TestCachedSQLite_nestedRunsOfOneQuery(t *testing.T) {
	ctx := context.Background()
	db := cachedDB(t)
	for i := range 3 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	const sel = `SELECT k, v FROM t WHERE k >= ? ORDER BY k`
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for range 2 { // the second makes it prepared
		rows, err := tx.QueryContext(ctx, sel, 0)
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	outer, err := tx.QueryContext(ctx, sel, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.QueryContext(ctx, sel, k)
		if err != nil {
			t.Fatal(err)
		}
		var vs []string
		for inner.Next() {
			var k2 int
			var v2 string
			if err := inner.Scan(&k2, &v2); err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v2)
		}
		if err := inner.Err(); err != nil {
			t.Fatal(err)
		}
		inner.Close()
		got = append(got, v+":"+strings.Join(vs, ","))
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	want := "v0:v0,v1,v2 v1:v1,v2 v2:v2"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", strings.Join(got, " "), want)
	}
	// The statement is free again once its rows closed.
	rows, err := tx.QueryContext(ctx, sel, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if n != 1 {
		t.Errorf("%d rows from k >= 2, want 1", n)
	}
}

// A prepared statement spans transactions: what a rolled-back transaction wrote through it
// is gone, a failed run leaves it usable, and an ended context ends its run.
func TestCachedSQLite_transactionsAndErrors(t *testing.T) {
	ctx := context.Background()
	db := cachedDB(t)
	const ins = `INSERT INTO t (k, v) VALUES (?, ?)`
	for _, c := range []struct {
		name   string
		k      int
		commit bool
	}{{"committed", 1, true}, {"rolled back", 2, false}, {"committed again", 3, true}, {"rolled back again", 4, false}} {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, ins, c.k, c.name); err != nil {
			t.Fatal(err)
		}
		if c.commit {
			err = tx.Commit()
		} else {
			err = tx.Rollback()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, db); n != 2 {
		t.Errorf("%d rows, want the 2 committed", n)
	}
	// A constraint failure through the prepared statement, then a good run.
	if _, err := db.ExecContext(ctx, ins, 1, "dup"); err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("duplicate key: %v, want a UNIQUE constraint error", err)
	}
	if _, err := db.ExecContext(ctx, ins, 5, "after the failure"); err != nil {
		t.Fatal(err)
	}
	// An ended context.
	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.ExecContext(done, ins, 6, "canceled"); err == nil {
		t.Error("insert with an ended context: no error")
	}
	if n := count(t, db); n != 3 {
		t.Errorf("%d rows, want 3", n)
	}
}

// Queries made of varying SQL come and go: the cache stays bounded and every query
// still answers right.
func TestCachedSQLite_bounded(t *testing.T) {
	ctx := context.Background()
	db := cachedDB(t)
	for i := range 2 * maxConnStmts {
		q := fmt.Sprintf(`INSERT INTO t (k, v) VALUES (?, ?) /* %d */`, i)
		if _, err := db.ExecContext(ctx, q, 2*i, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, q, 2*i+1, "b"); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(cachedOf(t, db)); got != maxConnStmts {
		t.Errorf("%d statements kept, want at most %d", got, maxConnStmts)
	}
	if n := count(t, db); n != 4*maxConnStmts {
		t.Errorf("%d rows, want %d", n, 4*maxConnStmts)
	}
	if err := db.Close(); err != nil {
		t.Errorf("close, with %d statements prepared: %v", maxConnStmts, err)
	}
}

// A statement whose LIMIT is bound to a parameter is compiled once, not at every run
// with another limit: SQLite's authorizer, which it asks at every compilation, is asked
// for the first runs only. The rows are those of the limits asked.
func TestCachedSQLite_boundLimitCompiledOnce(t *testing.T) {
	ctx := context.Background()
	db := cachedDB(t)
	for i := range 20 {
		if _, err := db.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	compiled := 0
	if err := conn.Raw(func(dc any) error {
		r, ok := dc.(*cachedConn).sqliteConn.(sqlite.AuthorizerRegisterer)
		if !ok {
			return fmt.Errorf("the driver's connection %T has no authorizer", dc)
		}
		return r.RegisterAuthorizer(func(action sqlite.AuthorizerActionCode, _, _, _, _ string) sqlite.AuthorizerReturnCode {
			if action == sqlite.AuthSelect {
				compiled++
			}
			return sqlite.AuthorizerOK
		})
	}); err != nil {
		t.Fatal(err)
	}
	const sel = `SELECT k FROM t WHERE k >= ? ORDER BY k LIMIT ?`
	for i := range 10 {
		rows, err := conn.QueryContext(ctx, sel, i, i+1)
		if err != nil {
			t.Fatal(err)
		}
		var ks []int
		for rows.Next() {
			var k int
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			ks = append(ks, k)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if len(ks) != i+1 || ks[0] != i || ks[i] != 2*i {
			t.Fatalf("run %d: rows %v, want %d rows from %d", i, ks, i+1, i)
		}
	}
	// The first run is not prepared, the second prepares: two compilations, however
	// many runs follow.
	if compiled != 2 {
		t.Errorf("the statement was compiled %d times in 10 runs with 10 limits, want 2", compiled)
	}
}
