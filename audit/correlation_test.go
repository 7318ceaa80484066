package audit_test

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func TestAppend_carriesTheContextsCorrelation(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	ctx := audit.WithCorrelation(context.Background(), "tick-aws-0a1b")
	events := []audit.Event{
		{Actor: "warden", Kind: "finding.opened", Subject: "fp1", Data: map[string]any{"policy": "p"}},
		{Actor: "warden", Kind: "action.planned", Subject: "a1"},
		{Actor: "warden", Kind: "action.applied", Subject: "a2", Data: map[string]any{"correlation": "its-own"}},
		{Actor: "warden", Kind: "note", Subject: "s", Data: []string{"not", "an", "object"}},
	}
	want := []string{
		`{"correlation":"tick-aws-0a1b","policy":"p"}`,
		`{"correlation":"tick-aws-0a1b"}`,
		`{"correlation":"its-own"}`,
		`["not","an","object"]`,
	}
	err := f.st.InTx(ctx, func(tx *store.Tx) error {
		if _, err := f.log.Append(ctx, tx, events[0]); err != nil {
			return err
		}
		_, err := f.log.AppendAll(ctx, tx, events[1:])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// Without a correlation the data is as given.
	if err := f.st.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := f.log.Append(context.Background(), tx, audit.Event{Actor: "warden", Kind: "note", Subject: "plain", Data: map[string]any{"k": 1}})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	want = append(want, `{"k":1}`)
	got, err := f.log.Entries(context.Background(), 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d", len(got), len(want))
	}
	for i, e := range got {
		if string(e.Data) != want[i] {
			t.Errorf("entry %d (%s) data = %s, want %s", i, e.Kind, e.Data, want[i])
		}
	}
	if rep, err := f.log.Verify(context.Background(), f.verify); err != nil || rep.Entries != int64(len(want)) {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}
