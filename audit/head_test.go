package audit_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// Size counts the entries and LatestCheckpoint finds the newest checkpoint's size and
// time, through a Reader as through a Tx.
func TestSizeAndLatestCheckpoint(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, dsn)
			ctx := context.Background()
			read := func() (size int64, c audit.CheckpointMark, ok bool) {
				t.Helper()
				err := f.st.Read(ctx, func(q *store.Reader) error {
					var err error
					if size, err = audit.Size(ctx, q); err != nil {
						return err
					}
					c, ok, err = audit.LatestCheckpoint(ctx, q)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return size, c, ok
			}
			if size, _, ok := read(); size != 0 || ok {
				t.Fatalf("an empty log: size %d, checkpoint %v; want 0, none", size, ok)
			}
			f.appendN(t, 5, 5)
			f.checkpoint(t)
			f.appendN(t, 2, 2)
			size, c, ok := read()
			if size != 7 || !ok || c.Size != 5 || c.At.Year() != 2025 {
				t.Errorf("7 entries, a checkpoint of 5: size %d, checkpoint %+v, %v", size, c, ok)
			}
			err := f.st.InTx(ctx, func(tx *store.Tx) error {
				n, err := audit.Size(ctx, tx)
				if err == nil && n != 7 {
					t.Errorf("Size in a transaction = %d, want 7", n)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
