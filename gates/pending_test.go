package gates_test

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// CountPending counts the requests still pending, past their expiry or not, and none
// that a decision or an expiry ended.
func TestCountPending(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			count := func() int {
				t.Helper()
				var n int
				if err := e.st.Read(ctx, func(q *store.Reader) error {
					var err error
					n, err = gates.CountPending(ctx, q)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := count(); n != 0 {
				t.Fatalf("no request: %d pending", n)
			}
			early := e.request("act-1", findings.RiskMedium, "h1")
			e.clock.Advance(30 * time.Minute)
			e.request("act-2", findings.RiskMedium, "h1")
			decided := e.request("act-3", findings.RiskMedium, "h1")
			decide(e, decided.ID, "bob", true, "")
			e.clock.Advance(30 * time.Minute)
			if n := count(); n != 2 {
				t.Errorf("two pending (one past its expiry), one approved: %d pending, want 2", n)
			}
			if err := e.st.InTx(ctx, func(tx *store.Tx) error {
				if _, err := e.gate.ExpireDue(ctx, tx); err != nil {
					return err
				}
				n, err := gates.CountPending(ctx, tx)
				if err == nil && n != 1 {
					t.Errorf("after %s expired, in the same transaction: %d pending, want 1", early.ID, n)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
