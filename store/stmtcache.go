package store

import (
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"modernc.org/sqlite"
)

// maxConnStmts bounds the statements one SQLite connection keeps prepared. The job
// queue runs a few dozen distinct queries; those made for a varying number of rows
// (IN lists, multi-row inserts) come and go through the least recently used slot.
const maxConnStmts = 64

// openCachedSQLite opens a pool on a SQLite URI whose connections keep the statements
// they run again prepared. modernc's driver parses a query's SQL at every ExecContext
// and QueryContext that is not a prepared statement's, and the job queue's driver
// (River's riversqlite) prepares none: a job's fetch and completion each parsed
// statements of a few hundred tokens, 0.3 ms a job on the sweep's profile.
func openCachedSQLite(uri string) (*sql.DB, error) {
	c, err := sqlite.NewConnector(uri)
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(stmtCacheConnector{c}), nil
}

// stmtCacheConnector opens connections wrapped in a statement cache.
type stmtCacheConnector struct{ driver.Connector }

// Connect opens a connection of the driver's and wraps it.
func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return newCachedConn(conn)
}

// sqliteConn is what every connection modernc's driver opens implements, and what a
// wrapper must forward (sqlite.NewConnector's documentation).
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachedConn is one SQLite connection and the statements it keeps prepared. database/sql
// uses a connection from one goroutine at a time, so it needs no lock; but a query's rows
// may still be open when the next query runs (a loop over rows that queries inside a
// transaction), so a statement whose rows are open is busy and not run again until they
// close.
type cachedConn struct {
	sqliteConn
	seen  map[string]bool          // queries run once: prepared at their second run
	stmts map[string]*list.Element // of lru, whose values are *cachedStmt
	lru   list.List                // most recently used first
}

// cachedStmt is one prepared statement of a cachedConn.
type cachedStmt struct {
	query string
	st    driver.Stmt
	busy  bool // its rows are open
}

func newCachedConn(conn driver.Conn) (driver.Conn, error) {
	sc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("open SQLite: the driver's connection is a %s, which lacks an interface warden forwards", reflect.TypeOf(conn))
	}
	return &cachedConn{sqliteConn: sc, seen: map[string]bool{}, stmts: map[string]*list.Element{}}, nil
}

// Unwrap is the driver's own connection (modernc's Limit and others look through
// wrappers with it).
func (c *cachedConn) Unwrap() driver.Conn { return c.sqliteConn }

// stmt is query's prepared statement if the connection has run it before and it is not
// busy; nil: run query as it is.
func (c *cachedConn) stmt(ctx context.Context, query string) *cachedStmt {
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			return nil
		}
		c.lru.MoveToFront(e)
		return cs
	}
	if !c.seen[query] {
		if len(c.seen) >= 4*maxConnStmts {
			clear(c.seen) // one-off queries do not accumulate
		}
		c.seen[query] = true
		return nil
	}
	st, err := c.PrepareContext(ctx, query)
	if err != nil {
		return nil // the query itself will say what is wrong with it
	}
	delete(c.seen, query)
	if c.lru.Len() >= maxConnStmts {
		c.evict()
	}
	cs := &cachedStmt{query: query, st: st}
	c.stmts[query] = c.lru.PushFront(cs)
	return cs
}

// evict closes the least recently used statement whose rows are closed.
func (c *cachedConn) evict() {
	for e := c.lru.Back(); e != nil; e = e.Prev() {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			continue
		}
		c.lru.Remove(e)
		delete(c.stmts, cs.query)
		_ = cs.st.Close()
		return
	}
}

// boundLimit starts a LIMIT bound to a parameter: warden's "LIMIT ?", River's "LIMIT ?5".
const boundLimit = "LIMIT ?"

// planOnce makes a LIMIT bound to a parameter an expression of it (LIMIT +?), which
// leaves its value as it is. SQLite plans a statement whose LIMIT is a bare parameter
// with the value bound to it, so every new binding expires the statement and its next
// step compiles it again (sqlite3ExprIsInteger, sqlite3VdbeSetVarmask). The job queue's
// fetch, whose LIMIT is the number of free workers, was compiled at every fetch: 1.35 s
// of a replica's CPU over three unchanged sweeps of 500 accounts.
func planOnce(query string) string {
	if !strings.Contains(query, boundLimit) {
		return query
	}
	return strings.ReplaceAll(query, boundLimit, "LIMIT +?")
}

// PrepareContext prepares query as the cache would run it.
func (c *cachedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.sqliteConn.PrepareContext(ctx, planOnce(query))
}

// ExecContext runs query through its prepared statement when it has one.
func (c *cachedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	query = planOnce(query)
	cs := c.stmt(ctx, query)
	if cs == nil {
		return c.sqliteConn.ExecContext(ctx, query, args)
	}
	return cs.st.(driver.StmtExecContext).ExecContext(ctx, args)
}

// QueryContext runs query through its prepared statement when it has one; the statement
// is busy until the rows close.
func (c *cachedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	query = planOnce(query)
	cs := c.stmt(ctx, query)
	if cs == nil {
		return c.sqliteConn.QueryContext(ctx, query, args)
	}
	r, err := cs.st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	if sr, ok := r.(sqliteRows); ok {
		return &cachedRows{sqliteRows: sr, cs: cs}, nil
	}
	return &plainCachedRows{Rows: r, cs: cs}, nil
}

// Close closes the prepared statements, then the connection.
func (c *cachedConn) Close() error {
	var errs []error
	for e := c.lru.Front(); e != nil; e = e.Next() {
		errs = append(errs, e.Value.(*cachedStmt).st.Close())
	}
	c.lru.Init()
	clear(c.stmts)
	errs = append(errs, c.sqliteConn.Close())
	return errors.Join(errs...)
}

// sqliteRows is what the rows of modernc's driver implement beyond driver.Rows.
type sqliteRows interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// cachedRows are a prepared statement's rows: closing them frees the statement.
type cachedRows struct {
	sqliteRows
	cs *cachedStmt
}

// Close closes the rows (the driver resets the statement) and frees the statement.
func (r *cachedRows) Close() error {
	err := r.sqliteRows.Close()
	r.cs.busy = false
	return err
}

// plainCachedRows are cachedRows of a driver whose rows implement only driver.Rows.
type plainCachedRows struct {
	driver.Rows
	cs *cachedStmt
}

// Close closes the rows and frees the statement.
func (r *plainCachedRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	return err
}
