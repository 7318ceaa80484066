package audit_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
)

// CheckpointAt finds the checkpoint signed last by a time, and refuses one whose row
// was edited; SeqsOf and EntriesOfKind find entries by subject and by kind.
func TestLog_storedLookups(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, dsn)
			ctx := context.Background()
			if _, ok, err := f.log.CheckpointAt(ctx, time.Now()); ok || err != nil {
				t.Fatalf("before any checkpoint: %v, %v; want none", ok, err)
			}
			f.appendN(t, 5, 5)
			f.checkpoint(t)
			first, ok, err := f.log.CheckpointAt(ctx, time.Now())
			if err != nil || !ok || first.Size != 5 || !strings.Contains(first.Note, "\n5\n") {
				t.Fatalf("after one checkpoint of 5: %+v, %v, %v", first, ok, err)
			}
			f.appendN(t, 3, 3)
			f.checkpoint(t)
			if got, ok, err := f.log.CheckpointAt(ctx, time.Now()); err != nil || !ok || got.Size != 8 {
				t.Errorf("the latest: %+v, %v, %v; want size 8", got, ok, err)
			}
			if got, ok, err := f.log.CheckpointAt(ctx, first.At); err != nil || !ok || got.Size != 5 {
				t.Errorf("at the first's time: %+v, %v, %v; want the first (size 5)", got, ok, err)
			}
			if _, ok, err := f.log.CheckpointAt(ctx, first.At.Add(-time.Nanosecond)); ok || err != nil {
				t.Errorf("before the first: %v, %v; want none", ok, err)
			}

			seqs, err := f.log.SeqsOf(ctx, "action/1", "action/3", "nobody")
			if err != nil || !slices.Equal(seqs, []int64{1, 3, 6}) {
				t.Errorf("SeqsOf = %v, %v; want [1 3 6] (action/1 in both batches, action/3 in the first)", seqs, err)
			}
			es, err := f.log.EntriesOfKind(ctx, audit.KindActionApplied)
			if err != nil || len(es) != 8 || es[7].Seq != 7 || es[0].Subject != "action/0" || len(es[0].Data) == 0 {
				t.Errorf("EntriesOfKind: %d entries, %v", len(es), err)
			}

			f.exec(t, `UPDATE audit_checkpoints SET size = 7 WHERE size = 8`)
			if _, _, err := f.log.CheckpointAt(ctx, time.Now()); err == nil || !strings.Contains(err.Error(), "its row says size 7") {
				t.Errorf("an edited row: %v, want it refused", err)
			}
		})
	}
}
