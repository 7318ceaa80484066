package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func TestAppend_verifyRoundTrip(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, mk)
			ctx := context.Background()
			rep, err := f.log.Verify(ctx, f.verify)
			if err != nil || rep.Entries != 0 {
				t.Fatalf("empty log: Verify = %+v, %v", rep, err)
			}
			f.appendN(t, 37, 5)
			cp := f.checkpoint(t)
			f.appendN(t, 20, 3)
			f.checkpoint(t)
			rep, err = f.log.Verify(ctx, f.verify, cp)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			if rep.Entries != 57 || rep.Checkpoints != 2 || rep.Given != 1 {
				t.Errorf("Verify = %+v, want 57 entries, 2 stored and 1 given checkpoint", rep)
			}
			c, err := audit.OpenCheckpoint(cp, f.verify)
			if err != nil || c.Size != 37 {
				t.Errorf("OpenCheckpoint = %+v, %v; want size 37", c, err)
			}
			var te *audit.TamperError
			if errors.As(err, &te) {
				t.Fatal(te)
			}
		})
	}
}

func TestAppend_rolledBackTransactionLeavesNoEntryNorGap(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, mk)
			ctx := context.Background()
			f.appendN(t, 3, 3)
			boom := errors.New("the change failed")
			err := f.st.InTx(ctx, func(tx *store.Tx) error {
				e, err := f.log.Append(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindActionIntent, Subject: "action/x"})
				if err != nil {
					return err
				}
				if e.Seq != 3 {
					t.Errorf("Append in the doomed transaction: seq %d, want 3", e.Seq)
				}
				return boom
			})
			if !errors.Is(err, boom) {
				t.Fatalf("InTx = %v, want the change's error", err)
			}
			var e audit.Entry
			err = f.st.InTx(ctx, func(tx *store.Tx) error {
				e, err = f.log.Append(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindActionApplied, Subject: "action/y"})
				return err
			})
			if err != nil || e.Seq != 3 {
				t.Fatalf("Append after the rollback = seq %d, %v; want seq 3 (no gap)", e.Seq, err)
			}
			var n int
			if err := f.db.QueryRow(`SELECT COUNT(*) FROM audit_entries WHERE subject = 'action/x'`).Scan(&n); err != nil || n != 0 {
				t.Errorf("rolled back entry stored %d times (%v), want 0", n, err)
			}
			if rep, err := f.log.Verify(ctx, f.verify); err != nil || rep.Entries != 4 {
				t.Errorf("Verify = %+v, %v; want 4 good entries", rep, err)
			}
		})
	}
}

func TestAppend_concurrentAppendersGetContiguousSeqs(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, mk)
			ctx := context.Background()
			const workers, each = 6, 15
			// Several processes share a database: each goroutine has its own store.
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			seqs := make(chan int64, workers*each)
			for w := range workers {
				st := storetest.Open(t, f.dsn)
				l := audit.New(st, audit.Options{})
				wg.Go(func() {
					for i := range each {
						err := st.InTx(ctx, func(tx *store.Tx) error {
							e, err := l.Append(ctx, tx, audit.Event{Actor: fmt.Sprintf("w%d", w), Kind: audit.KindScanRecorded, Subject: fmt.Sprint(i)})
							seqs <- e.Seq
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
			close(seqs)
			for err := range errs {
				t.Fatal(err)
			}
			var got []int64
			for s := range seqs {
				got = append(got, s)
			}
			slices.Sort(got)
			for i, s := range got {
				if s != int64(i) {
					t.Fatalf("seqs %v: not contiguous from 0", got)
				}
			}
			if rep, err := f.log.Verify(ctx, nil); err != nil || rep.Entries != workers*each {
				t.Errorf("Verify = %+v, %v; want %d good entries", rep, err, workers*each)
			}
		})
	}
}

func TestAppend_refusesEventsItCannotRecord(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	ctx := context.Background()
	for name, ev := range map[string]audit.Event{
		"no actor":         {Kind: audit.KindConfig},
		"blank actor":      {Actor: "  ", Kind: audit.KindConfig},
		"no kind":          {Actor: "bob"},
		"unencodable data": {Actor: "bob", Kind: audit.KindConfig, Data: func() {}},
	} {
		t.Run(name, func(t *testing.T) {
			err := f.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := f.log.Append(ctx, tx, ev)
				return err
			})
			if err == nil {
				t.Fatalf("Append(%+v) succeeded, want refused", ev)
			}
		})
	}
}

func TestAppend_entryRecordIsCanonicalJSON(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	ctx := context.Background()
	f.log = audit.New(f.st, audit.Options{Now: func() time.Time {
		return time.Date(2025, 1, 2, 3, 4, 5, 120000000, time.FixedZone("CET", 3600))
	}})
	var got []audit.Entry
	for _, data := range []any{
		map[string]any{"z": 1, "a": []any{"x", 2.5, nil, true}, "m": map[string]string{"b": "1", "a": "2"}},
		json.RawMessage(`{ "m": {"a":"2","b":"1"}, "a": ["x", 2.5, null, true], "z": 1 }`),
	} {
		err := f.st.InTx(ctx, func(tx *store.Tx) error {
			e, err := f.log.Append(ctx, tx, audit.Event{Actor: "bob \"b\"", Kind: audit.KindPlanCreated, Subject: "plan/<1>\n", Data: data})
			got = append(got, e)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `{"actor":"bob \"b\"","data":{"a":["x",2.5,null,true],"m":{"a":"2","b":"1"},"z":1},"kind":"plan.created","seq":0,"subject":"plan/<1>\n","time":"2025-01-02T02:04:05.12Z"}`
	if rec := string(got[0].Record()); rec != want {
		t.Errorf("Record =\n%s\nwant\n%s", rec, want)
	}
	if !bytes.Equal(got[0].Data, got[1].Data) {
		t.Errorf("equal data encoded differently: %s and %s", got[0].Data, got[1].Data)
	}
	if got[0].LeafHash() != tlog.RecordHash([]byte(want)) {
		t.Errorf("LeafHash is not tlog.RecordHash of the record")
	}
	if rec := audit.CanonicalRecord(0, "2025-01-02T02:04:05.12Z", "bob \"b\"", audit.KindPlanCreated, "plan/<1>\n", got[0].Data); string(rec) != want {
		t.Errorf("CanonicalRecord = %s, want %s", rec, want)
	}
}
