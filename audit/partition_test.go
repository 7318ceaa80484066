package audit_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// Transactions of different partitions (store.InTxOn) append to the log at once: the
// log serializes its appends, so the sequence has no gap or duplicate and verifies.
func TestAppend_fromPartitionedTransactions(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, dsn)
			var mu sync.Mutex
			now := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
			log := audit.New(f.st, audit.Options{Signer: f.signer, Now: func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(time.Millisecond)
				return now
			}})
			const workers, txs, per = 6, 15, 3
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					scope := fmt.Sprintf("aws/%d/iam", w)
					for i := range txs {
						err := f.st.InTxOn(ctx, scope, func(tx *store.Tx) error {
							if _, err := log.Append(ctx, tx, audit.Event{Actor: "test", Kind: "finding.opened", Subject: fmt.Sprintf("%s/%d/one", scope, i)}); err != nil {
								return err
							}
							evs := make([]audit.Event, per-1)
							for j := range evs {
								evs[j] = audit.Event{Actor: "test", Kind: "finding.opened", Subject: fmt.Sprintf("%s/%d/%d", scope, i, j)}
							}
							_, err := log.AppendAll(ctx, tx, evs)
							return err
						})
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			var n, maxSeq int64
			if err := f.db.QueryRow(`SELECT COUNT(*), MAX(seq) FROM audit_entries`).Scan(&n, &maxSeq); err != nil {
				t.Fatal(err)
			}
			if want := int64(workers * txs * per); n != want || maxSeq != want-1 {
				t.Fatalf("%d entries, last seq %d; want %d entries numbered 0…%d", n, maxSeq, want, want-1)
			}
			if _, err := log.Checkpoint(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := log.Verify(ctx, f.verify); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
}
