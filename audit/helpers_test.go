package audit_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// fixture is one audit log on a fresh database, with a signing key.
type fixture struct {
	dsn    string
	st     *store.Store
	log    *audit.Log
	signer note.Signer
	verify note.Verifier
	db     *sql.DB
	dbName string
}

// clock returns a clock that ticks one millisecond and a few nanoseconds per call, so
// that times carry fractional digits of every length.
func clock() func() time.Time {
	t := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Millisecond + 7*time.Nanosecond)
		return t
	}
}

func newFixture(t testing.TB, mkDSN func(testing.TB) string) *fixture {
	t.Helper()
	f := &fixture{dsn: mkDSN(t)}
	f.st = storetest.Open(t, f.dsn)
	skey, vkey, err := note.GenerateKey(rand.Reader, audit.KeyName)
	if err != nil {
		t.Fatal(err)
	}
	if f.signer, f.verify, err = audit.ParseKey(skey); err != nil {
		t.Fatal(err)
	}
	if got, _ := audit.VerifierKey(f.verify); got != vkey {
		t.Fatalf("VerifierKey = %q, want %q", got, vkey)
	}
	f.log = audit.New(f.st, audit.Options{Now: clock(), Signer: f.signer})
	f.db, f.dbName = storetest.RawDB(t, f.dsn)
	return f
}

// appendN appends n events, per tx entries per transaction.
func (f *fixture) appendN(t testing.TB, n, per int) {
	t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		err := f.st.InTx(ctx, func(tx *store.Tx) error {
			for i := 0; i < per && done+i < n; i++ {
				k := done + i
				if _, err := f.log.Append(ctx, tx, audit.Event{Actor: "bob", Kind: audit.KindActionApplied,
					Subject: fmt.Sprintf("action/%d", k), Data: map[string]any{"n": k, "note": "x<y&z"}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		done += per
	}
}

// exec runs a statement on the raw database, ? placeholders turned into PostgreSQL's.
func (f *fixture) exec(t testing.TB, q string, args ...any) int64 {
	t.Helper()
	if f.dbName == "postgres" {
		var b strings.Builder
		n := 0
		for _, r := range q {
			if r == '?' {
				n++
				fmt.Fprintf(&b, "$%d", n)
				continue
			}
			b.WriteRune(r)
		}
		q = b.String()
	}
	res, err := f.db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	rows, _ := res.RowsAffected()
	return rows
}

// checkpoint signs a checkpoint now.
func (f *fixture) checkpoint(t testing.TB) []byte {
	t.Helper()
	cp, err := f.log.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// A checkpoint signed while the log was empty (a daemon's first, on a fresh database)
// verifies, before and after entries follow it.
func TestVerify_checkpointOfTheEmptyLog(t *testing.T) {
	f := newFixture(t, storetest.Backends(t)["sqlite"])
	ctx := context.Background()
	if _, err := f.log.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := f.log.Verify(ctx, f.verify); err != nil || rep.Checkpoints != 1 {
		t.Fatalf("verify the empty log: %+v %v", rep, err)
	}
	f.appendN(t, 5, 1)
	if rep, err := f.log.Verify(ctx, f.verify); err != nil || rep.Entries != 5 {
		t.Fatalf("verify after 5 entries: %+v %v", rep, err)
	}
}
