package gates_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// BenchmarkWaiting is what warden serve reads every few seconds to find the approval
// requests that stopped waiting, among 20,000 that wait: every pending request
// (Pending), or those touched in the last minute (Touched) — none here (BENCHMARKS.md,
// "Looks for decisions that cost what was decided").
func BenchmarkWaiting(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, storetest.Backends(b)["sqlite"], testConfig)
	if err := e.st.InTx(ctx, func(tx *store.Tx) error {
		for i := range 20000 {
			if _, err := e.gate.Request(ctx, tx, action(fmt.Sprintf("act-%06d", i), findings.RiskCritical), "h1", "alice"); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	for name, read := range map[string]func(q *store.Reader) error{
		"Pending": func(q *store.Reader) error { _, err := gates.Pending(ctx, q); return err },
		"Touched": func(q *store.Reader) error {
			_, err := gates.Touched(ctx, q, e.clock.Now().Add(-time.Minute), e.clock.Now())
			return err
		},
	} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := e.st.Read(ctx, read); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
