package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// A statement a transaction runs again, row after row, reads and writes the same rows as
// each run parsed anew: on SQLite, the connection's cache of prepared statements
// (stmtcache.go) serves the second run on, across transactions, rolled back or not;
// PostgreSQL's driver keeps its own.
func TestTx_repeatedStatements(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, dsn(t))
			if err := st.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `CREATE TABLE stmt_test (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			const upsert = `INSERT INTO stmt_test (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v`
			write := func(n, v int) func(tx *store.Tx) error {
				return func(tx *store.Tx) error {
					for i := range n {
						if _, err := tx.ExecContext(ctx, upsert, fmt.Sprintf("k%03d", i), v+i); err != nil {
							return err
						}
						var got int
						if err := tx.QueryRowContext(ctx, `SELECT v FROM stmt_test WHERE k = ?`, fmt.Sprintf("k%03d", i)).Scan(&got); err != nil {
							return err
						}
						if got != v+i {
							return fmt.Errorf("k%03d reads %d inside the transaction, want %d", i, got, v+i)
						}
					}
					return nil
				}
			}
			if err := st.InTx(ctx, write(100, 0)); err != nil {
				t.Fatal(err)
			}
			errRolledBack := errors.New("rolled back")
			if err := st.InTxOn(ctx, "p", func(tx *store.Tx) error {
				if err := write(100, 1000)(tx); err != nil {
					return err
				}
				return errRolledBack
			}); !errors.Is(err, errRolledBack) {
				t.Fatal(err)
			}
			if err := st.InTx(ctx, write(50, 2000)); err != nil {
				t.Fatal(err)
			}
			err := st.Read(ctx, func(q *store.Reader) error {
				rows, err := store.QueryAll(ctx, q, func(r *sql.Rows) ([2]int, error) {
					var k string
					var v int
					err := r.Scan(&k, &v)
					var i int
					fmt.Sscanf(k, "k%03d", &i)
					return [2]int{i, v}, err
				}, `SELECT k, v FROM stmt_test ORDER BY k`)
				if err != nil {
					return err
				}
				if len(rows) != 100 {
					return fmt.Errorf("%d rows, want 100", len(rows))
				}
				for _, r := range rows {
					want := r[0] // the first transaction's value
					if r[0] < 50 {
						want = 2000 + r[0] // the third's; the second rolled back
					}
					if r[1] != want {
						return fmt.Errorf("k%03d = %d, want %d", r[0], r[1], want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
