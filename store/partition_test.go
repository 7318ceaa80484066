package store_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// secondWhileFirstOpen runs first, and second once first has begun, and reports whether
// second committed while first was still open: first stays open up to wait for it.
func secondWhileFirstOpen(t *testing.T, st *store.Store, wait time.Duration, first, second func(ctx context.Context, fn func(*store.Tx) error) error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	started := make(chan struct{})
	secondDone := make(chan struct{})
	firstErr := make(chan error, 1)
	var ranAlongside bool
	go func() {
		firstErr <- first(ctx, func(tx *store.Tx) error {
			close(started)
			select {
			case <-secondDone:
				ranAlongside = true
			case <-time.After(wait):
				// The second waits for this one: it cannot finish while this is open.
			}
			return nil
		})
	}()
	<-started
	if err := second(ctx, func(tx *store.Tx) error { return nil }); err != nil {
		t.Fatalf("second transaction: %v", err)
	}
	close(secondDone)
	if err := <-firstErr; err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	return ranAlongside
}

// Transactions of different partitions commit side by side on PostgreSQL; those of one
// partition, and InTx against any, wait their turn. SQLite has one writer: all wait.
func TestInTxOn_partitions(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			on := func(p string) func(ctx context.Context, fn func(*store.Tx) error) error {
				return func(ctx context.Context, fn func(*store.Tx) error) error { return st.InTxOn(ctx, p, fn) }
			}
			whole := func(ctx context.Context, fn func(*store.Tx) error) error { return st.InTx(ctx, fn) }
			parallel := name == "postgres"
			for _, c := range []struct {
				name          string
				first, second func(ctx context.Context, fn func(*store.Tx) error) error
				alongside     bool
			}{
				{"other partition", on("test/a"), on("test/b"), parallel},
				{"same partition", on("test/a"), on("test/a"), false},
				{"InTx after a partition", on("test/a"), whole, false},
				{"a partition after InTx", whole, on("test/a"), false},
			} {
				// Waiting long for what should not happen would only slow the test: half a
				// second shows a second transaction waits; one expected alongside gets 20 s.
				wait := 500 * time.Millisecond
				if c.alongside {
					wait = 20 * time.Second
				}
				if got := secondWhileFirstOpen(t, st, wait, c.first, c.second); got != c.alongside {
					t.Errorf("%s: the second committed while the first was open: %v, want %v", c.name, got, c.alongside)
				}
			}
		})
	}
}

// Serialize makes partitioned transactions that take the same name run one at a time
// from there on, and costs nothing in InTx.
func TestTx_serialize(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			st := storetest.Open(t, dsn(t))
			serialized := func(p string) func(ctx context.Context, fn func(*store.Tx) error) error {
				return func(ctx context.Context, fn func(*store.Tx) error) error {
					return st.InTxOn(ctx, p, func(tx *store.Tx) error {
						if err := tx.Serialize(ctx, "audit"); err != nil {
							return err
						}
						if err := tx.Serialize(ctx, "audit"); err != nil { // taken twice: held once
							return err
						}
						return fn(tx)
					})
				}
			}
			if secondWhileFirstOpen(t, st, 500*time.Millisecond, serialized("test/a"), serialized("test/b")) {
				t.Error("two transactions holding the audit lock ran side by side")
			}
			if err := st.InTx(context.Background(), func(tx *store.Tx) error { return tx.Serialize(context.Background(), "audit") }); err != nil {
				t.Errorf("Serialize in InTx: %v", err)
			}
		})
	}
}

// Advisory locks belong to the database: stores in two schemas of one database (two
// deployments, two tests) each have their own writers' lock.
func TestInTx_schemasDoNotShareTheLock(t *testing.T) {
	base := os.Getenv("WARDEN_TEST_POSTGRES")
	if base == "" {
		t.Skip("PostgreSQL not tested: set WARDEN_TEST_POSTGRES")
	}
	one := storetest.Open(t, storetest.FreshSchema(t, base))
	two := storetest.Open(t, storetest.FreshSchema(t, base))
	first := func(ctx context.Context, fn func(*store.Tx) error) error { return one.InTx(ctx, fn) }
	second := func(ctx context.Context, fn func(*store.Tx) error) error { return two.InTx(ctx, fn) }
	if !secondWhileFirstOpen(t, one, 20*time.Second, first, second) {
		t.Error("a store in another schema waited for this one's write transaction")
	}
}
