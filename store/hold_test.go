package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// Hold serializes the holders of one name, across two Stores of one database on
// PostgreSQL (two replicas) and within one Store on SQLite; other names do not wait; a
// holder waiting past its context gets the context's error; a transaction runs while a
// name is held.
func TestHold_serializesOneName(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := dsn(t)
			a := storetest.Open(t, d)
			b := a
			if name == "postgres" {
				b = storetest.Open(t, d)
			}
			release, err := a.Hold(ctx, "target/x")
			if err != nil {
				t.Fatal(err)
			}
			// Another name is free.
			other, err := b.Hold(ctx, "target/y")
			if err != nil {
				t.Fatal(err)
			}
			other()
			// A transaction is not held up by a held name.
			if err := b.InTx(ctx, func(*store.Tx) error { return nil }); err != nil {
				t.Fatal(err)
			}
			// The same name waits: until the context ends…
			short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			defer cancel()
			if _, err := b.Hold(short, "target/x"); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("second holder while held: %v, want the context's deadline", err)
			}
			// …or until the first lets go.
			var got atomic.Bool
			done := make(chan error, 1)
			go func() {
				r, err := b.Hold(ctx, "target/x")
				if err == nil {
					got.Store(true)
					r()
				}
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			if got.Load() {
				t.Fatal("the second holder got the name while the first held it")
			}
			release()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("the second holder never got the name after its release")
			}
			release() // a second release is harmless
		})
	}
}
