package remediate_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// opener runs fn in one transaction: store.InTx, or store.InTxOn of a partition.
type opener func(ctx context.Context, fn func(*store.Tx) error) error

// whileOpen opens a transaction with open, makes write in it, and runs run while it
// stays open. It reports whether run finished with the transaction still open (waiting
// up to wait for it), then lets the transaction commit and waits for run.
func whileOpen(t *testing.T, open opener, write func(ctx context.Context, tx *store.Tx) error, wait time.Duration, run func() error) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	opened, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- open(ctx, func(tx *store.Tx) error {
			if err := write(ctx, tx); err != nil {
				return err
			}
			close(opened)
			<-release
			return nil
		})
	}()
	select {
	case <-opened:
	case err := <-held:
		t.Fatalf("open the first transaction: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- run() }()
	alongside := false
	select {
	case err := <-done:
		alongside = true
		close(release)
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		// run waits for the open transaction: it cannot finish before it ends.
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-held; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	return alongside
}

// touch writes action id's row without changing it: the open transaction holds what a
// fix job's transaction of that action holds.
func touch(id string) func(ctx context.Context, tx *store.Tx) error {
	return func(ctx context.Context, tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE actions SET updated_at = updated_at WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return errors.New("the action to hold is not recorded")
		}
		return nil
	}
}

// The fix jobs of different targets do not wait for each other's transactions on
// PostgreSQL: one target's transaction held open, another target's fix goes its whole
// way (recorded, re-checked, intent, call, verified, audited). A transaction of the
// whole store (InTx) still holds every fix back; on SQLite, one writer, everything waits.
func TestApply_otherTargetsFixWhileOneTargetsTransactionIsOpen(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(3), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
			plans := one(only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 3))
			if len(plans) != 3 {
				t.Fatalf("%d actions, want 3", len(plans))
			}
			a, b, c := plans[0].Actions[0], plans[1].Actions[0], plans[2].Actions[0]
			if a.Target == b.Target || a.Target == c.Target || b.Target == c.Target {
				t.Fatalf("targets %s, %s, %s: want three", a.Target, b.Target, c.Target)
			}
			m := e.Machine("warden", remediate.Limits{})
			if _, err := m.Ask(ctx, plans[0]); err != nil { // records a, for the transaction to hold
				t.Fatal(err)
			}
			partitionOf := func(target string) opener {
				return func(ctx context.Context, fn func(*store.Tx) error) error {
					return e.Store.InTxOn(ctx, remediate.TargetPartition(target), fn)
				}
			}
			whole := func(ctx context.Context, fn func(*store.Tx) error) error { return e.Store.InTx(ctx, fn) }
			apply := func(p *remediate.Plan) func() error {
				return func() error {
					res, err := m.Apply(ctx, p, true)
					if err != nil {
						return err
					}
					if it := itemOf(t, res, p.Actions[0].ID); it.State != remediate.StateVerified || !it.Wrote {
						return errors.New("fix of " + p.Actions[0].Target + ": " + string(it.State) + ": " + it.Outcome)
					}
					return nil
				}
			}
			if whileOpen(t, whole, touch(a.ID), 500*time.Millisecond, apply(plans[2])) {
				t.Errorf("a fix committed while a transaction of the whole store was open")
			}
			parallel := name == "postgres"
			wait := 500 * time.Millisecond
			if parallel {
				wait = 20 * time.Second
			}
			if got := whileOpen(t, partitionOf(a.Target), touch(a.ID), wait, apply(plans[1])); got != parallel {
				t.Errorf("the fix of %s committed while a transaction of %s was open: %v, want %v", b.Target, a.Target, got, parallel)
			}
			if err := apply(plans[0])(); err != nil {
				t.Fatal(err)
			}
			for _, p := range plans {
				if open, _ := e.SSHOpen(t, p.Actions[0].Target); open {
					t.Errorf("%s still opens SSH after its verified fix", p.Actions[0].Target)
				}
			}
			e.VerifyAudit(t)
		})
	}
}

// The approval gate's path of a fix job (a request made, the action pending) runs in its
// target's partition too.
func TestAsk_requestsApprovalWhileAnotherTargetsTransactionIsOpen(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(2), gates.Config{Approvers: []string{"bob"}, UncheckedNames: true})
			plans := one(only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 2))
			if len(plans) != 2 {
				t.Fatalf("%d actions, want 2", len(plans))
			}
			m := e.Machine("alice", remediate.Limits{})
			if _, err := m.Ask(ctx, plans[0]); err != nil {
				t.Fatal(err)
			}
			a := plans[0].Actions[0]
			held := func(ctx context.Context, fn func(*store.Tx) error) error {
				return e.Store.InTxOn(ctx, remediate.TargetPartition(a.Target), fn)
			}
			var it remediate.Item
			ask := func() error {
				res, err := m.Apply(ctx, plans[1], true)
				if err == nil {
					it = itemOf(t, res, plans[1].Actions[0].ID)
				}
				return err
			}
			parallel := name == "postgres"
			wait := 500 * time.Millisecond
			if parallel {
				wait = 20 * time.Second
			}
			if got := whileOpen(t, held, touch(a.ID), wait, ask); got != parallel {
				t.Errorf("the approval request committed while another target's transaction was open: %v, want %v", got, parallel)
			}
			if it.State != remediate.StatePending || it.Request == "" {
				t.Fatalf("the fix needing approval: %+v", it)
			}
			if n := e.Sim.WriteCount(); n != 0 {
				t.Errorf("%d writes to the cloud before any approval", n)
			}
		})
	}
}

// Two runs of one action (a sweep's job and an event's, two replicas) wait for each
// other's transactions in its target's partition: held open, neither gets through; once
// it commits, the fix is made once, with one intent and one verification in the audit
// log, and the run that lost the race says so (ErrStateChanged).
func TestApply_oneTargetsRunsWaitForEachOther(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := start(t, dsn(t), world(1), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}})
			plans := one(only(e.Plan(t, "alice"), "aws.ec2.revoke_ingress", 1))
			if len(plans) != 1 {
				t.Fatalf("%d actions, want 1", len(plans))
			}
			p, a := plans[0], plans[0].Actions[0]
			r1, r2 := e.Machine("replica-1", remediate.Limits{}), e.Machine("replica-2", remediate.Limits{})
			if _, err := r1.Ask(ctx, p); err != nil {
				t.Fatal(err)
			}
			e.Sim.ResetCalls()
			held := func(ctx context.Context, fn func(*store.Tx) error) error {
				return e.Store.InTxOn(ctx, remediate.TargetPartition(a.Target), fn)
			}
			var mu sync.Mutex
			var items []remediate.Item
			var lost int
			both := func() error {
				var wg sync.WaitGroup
				errs := make([]error, 2)
				for i, m := range []*remediate.Machine{r1, r2} {
					wg.Go(func() {
						res, err := m.Apply(ctx, p, true)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case errors.Is(err, remediate.ErrStateChanged):
							lost++
						case err != nil:
							errs[i] = err
						default:
							items = append(items, itemOf(t, res, a.ID))
						}
					})
				}
				wg.Wait()
				return errors.Join(errs...)
			}
			if whileOpen(t, held, touch(a.ID), 500*time.Millisecond, both) {
				t.Error("a run of the action committed while another transaction of its target was open")
			}
			wrote := 0
			for _, it := range items {
				if it.Wrote {
					wrote++
				}
				if it.State != remediate.StateVerified {
					t.Errorf("run's item: %+v", it)
				}
			}
			if wrote != 1 || len(items)+lost != 2 {
				t.Errorf("%d runs wrote, %d reported, %d lost the race: want one write in two runs", wrote, len(items), lost)
			}
			if n := e.Sim.WriteCount(); n != 1 {
				t.Errorf("%d writes to the cloud, want 1", n)
			}
			for _, kind := range []string{audit.KindActionIntent, audit.KindActionVerified} {
				es, err := e.Log.EntriesOfKind(ctx, kind)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, en := range es {
					if en.Subject == a.ID {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d %s entries for the action, want 1", n, kind)
				}
			}
			e.VerifyAudit(t)
		})
	}
}
