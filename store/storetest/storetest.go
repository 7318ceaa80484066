// Package storetest gives every package that persists through the store the same two
// real databases to test on: SQLite always, and PostgreSQL when WARDEN_TEST_POSTGRES
// names a server (.ci/run starts one; under CI it is required).
package storetest

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/store"
)

// Backends returns, by database name, functions making a fresh empty database for one
// test and returning its DSN.
func Backends(t testing.TB) map[string]func(t testing.TB) string {
	t.Helper()
	b := map[string]func(t testing.TB) string{
		"sqlite": func(t testing.TB) string { return filepath.Join(t.TempDir(), "state", "warden.db") },
	}
	base := os.Getenv("WARDEN_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("WARDEN_TEST_POSTGRES is not set: .ci/run starts PostgreSQL for the store's tests")
		}
		t.Log("PostgreSQL not tested: set WARDEN_TEST_POSTGRES=postgres://user:pass@host/db")
		return b
	}
	b["postgres"] = func(t testing.TB) string { return FreshSchema(t, base) }
	return b
}

// FreshSchema makes an empty PostgreSQL schema for one test, dropped when it ends, and
// returns the URL that uses it.
func FreshSchema(t testing.TB, base string) string {
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

// Open opens (creating and migrating) the store at dsn, closed when the test ends.
func Open(t testing.TB, dsn string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// RawDB opens the database at dsn directly, bypassing the store, for tests that tamper
// with rows or check them as the database holds them. It returns the handle and the
// database name ("sqlite" or "postgres"); SQLite queries use ?, PostgreSQL's $1.
func RawDB(t testing.TB, dsn string) (*sql.DB, string) {
	t.Helper()
	driver, src := "sqlite", dsn
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		driver = "pgx"
	} else {
		src = "file:" + dsn + "?_pragma=busy_timeout(10000)"
	}
	db, err := sql.Open(driver, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if driver == "pgx" {
		return db, "postgres"
	}
	return db, "sqlite"
}
