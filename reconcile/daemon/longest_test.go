package daemon

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// A sweep queues its collections so that the queue starts the scopes whose last reads
// took the most calls first, and the scopes never read after them all; scopes of equal
// calls keep their order.
func TestSweep_startsTheLongestScopesFirst(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), remediatetest.World(3), gates.Config{Auto: []findings.Risk{findings.RiskLow}}, remediatetest.Options{})
			d := unstarted(t, e)
			tg, err := d.target("aws")
			if err != nil {
				t.Fatal(err)
			}
			scopes, err := tg.Collector.Scopes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(scopes) < 3 {
				t.Fatalf("the world has %d scopes: want at least 3", len(scopes))
			}
			// The first scope was never read; the others took 2, 5, 0, 2, 5, 0, … calls.
			calls := map[string]int{}
			err = e.Store.InTx(ctx, func(tx *store.Tx) error {
				for i, sc := range scopes[1:] {
					sc.Status, sc.Calls = "ok", []int{2, 5, 0}[i%3]
					calls[sc.ID] = sc.Calls
					if err := state.PutScope(ctx, tx, state.Scope{Scope: sc}); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, n := range []int{5, 2, 0, -1} {
				for _, sc := range scopes {
					if c, ok := calls[sc.ID]; (n < 0 && !ok) || (ok && c == n) {
						want = append(want, sc.ID)
					}
				}
			}

			if err := (&sweepWorker{d: d}).Work(ctx, job(1, SweepArgs{Target: "aws", Correlation: "t-1"})); err != nil {
				t.Fatal(err)
			}
			if got := fetchOrder(t, e.Store); !slices.Equal(got, want) {
				t.Errorf("the queue starts the scopes in the order\n%v\nwant\n%v", got, want)
			}
		})
	}
}

// fetchOrder is the scopes of the queued collections in the order the queue starts
// them (River's: priority, then time, then id).
func fetchOrder(t *testing.T, st *store.Store) []string {
	t.Helper()
	var out []string
	args := "args"
	if st.Dialect() == "sqlite" {
		args = "json(args)" // River keeps them as JSONB there
	}
	err := st.Read(context.Background(), func(q *store.Reader) error {
		rows, err := q.QueryContext(context.Background(), `SELECT `+args+` FROM river_job WHERE kind = ? ORDER BY priority, scheduled_at, id`, KindCollect)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var args []byte
			if err := rows.Scan(&args); err != nil {
				return err
			}
			var a CollectArgs
			if err := json.Unmarshal(args, &a); err != nil {
				return err
			}
			out = append(out, a.Scope)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
