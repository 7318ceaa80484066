package audit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// AppendAll builds the same tree as one Append per event: the same root, at every size
// a batch ends on, including batches that start mid-subtree and cross insert chunks.
func TestAppendAll_sameTreeAsAppend(t *testing.T) {
	ctx := context.Background()
	fixed := func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC) }
	events := func(from, n int) []audit.Event {
		var evs []audit.Event
		for i := from; i < from+n; i++ {
			evs = append(evs, audit.Event{Actor: "warden", Kind: audit.KindFindingOpened, Subject: fmt.Sprintf("fp-%d", i),
				Data: map[string]any{"n": i}})
		}
		return evs
	}
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			one := storetest.Open(t, mk(t))
			all := storetest.Open(t, mk(t))
			lOne := audit.New(one, audit.Options{Now: fixed, Origin: "warden.audit/test"})
			lAll := audit.New(all, audit.Options{Now: fixed, Origin: "warden.audit/test"})
			n := 0
			for _, size := range []int{1, 2, 5, 600, 1, 1203} {
				evs := events(n, size)
				n += size
				if err := one.InTx(ctx, func(tx *store.Tx) error {
					for _, ev := range evs {
						if _, err := lOne.Append(ctx, tx, ev); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				var got []audit.Entry
				if err := all.InTx(ctx, func(tx *store.Tx) error {
					var err error
					got, err = lAll.AppendAll(ctx, tx, evs)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				if len(got) != size || got[0].Seq != int64(n-size) || got[size-1].Seq != int64(n-1) {
					t.Fatalf("AppendAll of %d at %d: seqs %d..%d", size, n-size, got[0].Seq, got[len(got)-1].Seq)
				}
				rOne, err := lOne.Verify(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				rAll, err := lAll.Verify(ctx, nil)
				if err != nil {
					t.Fatalf("verify after AppendAll: %v", err)
				}
				if rOne.Entries != int64(n) || rAll.Entries != int64(n) || rOne.Root != rAll.Root {
					t.Fatalf("at %d entries: Append %d %s, AppendAll %d %s", n, rOne.Entries, rOne.Root, rAll.Entries, rAll.Root)
				}
			}
		})
	}
}

func TestAppendChanged_onlyWhenTheSubjectChanges(t *testing.T) {
	ctx := context.Background()
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, mk)
			var got []bool
			for _, v := range []string{"sha256:a", "sha256:a", "sha256:b", "sha256:a", "sha256:a"} {
				if err := f.st.InTx(ctx, func(tx *store.Tx) error {
					// Another kind in between must not hide the last version.
					if _, err := f.log.Append(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindScanRecorded, Subject: "scan/1"}); err != nil {
						return err
					}
					ok, err := f.log.AppendChanged(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindPolicyPack, Subject: v})
					got = append(got, ok)
					return err
				}); err != nil {
					t.Fatal(err)
				}
			}
			if want := []bool{true, false, true, true, false}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("appended %v, want %v", got, want)
			}
		})
	}
}
