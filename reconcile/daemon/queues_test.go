package daemon

import (
	"context"
	"database/sql"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// A sweep's collections go to the readers' queue, and the fixes a collection plans queue
// behind those of a change event, which have a queue of their own: on both databases, as
// River stores them.
func TestQueues_readsApartAndSweptFixesAfterEvents(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), remediatetest.World(2), gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}}, remediatetest.Options{})
			d := unstarted(t, e)
			if err := (&sweepWorker{d: d}).Work(ctx, job(1, SweepArgs{Target: "aws", Correlation: "t-1"})); err != nil {
				t.Fatal(err)
			}
			collects := jobRows(t, e.Store, KindCollect)
			if len(collects) < 3 {
				t.Fatalf("%d collections queued, want one per scope", len(collects))
			}
			for _, j := range collects {
				if j.queue != QueueCollect {
					t.Errorf("a collection in queue %q, want %q", j.queue, QueueCollect)
				}
			}
			scope := "aws/" + remediatetest.Account + "/ec2/us-east-1"
			if err := (&collectWorker{d: d}).Work(ctx, job(2, CollectArgs{Target: "aws", Scope: scope, Correlation: "t-1"})); err != nil {
				t.Fatal(err)
			}
			swept := jobRows(t, e.Store, KindRemediate)
			if len(swept) != 2 {
				t.Fatalf("%d fixes queued by the collection, want the 2 open groups'", len(swept))
			}
			for _, j := range swept {
				if j.queue != "default" || j.priority != prioritySwept {
					t.Errorf("a swept fix in queue %q at priority %d, want default at %d", j.queue, j.priority, prioritySwept)
				}
			}
			// The same scope planned for an event meanwhile: one job per action still,
			// and those jobs move up and into the events' queue, ahead of the sweep's
			// other fixes and out of their workers' way.
			if err := d.remediate(ctx, scope, nil, "t-2", 1, priorityEvent); err != nil {
				t.Fatal(err)
			}
			event := jobRows(t, e.Store, KindRemediate)
			if len(event) != 2 {
				t.Fatalf("%d fixes queued after the event, want the same 2", len(event))
			}
			for _, j := range event {
				if j.priority != priorityEvent || j.queue != QueueEvents {
					t.Errorf("an event's fix in queue %q at priority %d, want %q at %d, ahead of a sweep's %d", j.queue, j.priority, QueueEvents, priorityEvent, prioritySwept)
				}
			}
			// A refresh that an event asks for, and the fixes it plans anew, are the
			// events' too.
			if _, err := d.insertOne(ctx, RefreshArgs{Target: "aws", UID: "arn:x", Source: "ev-1", Scope: scope, Correlation: "ev-1"}); err != nil {
				t.Fatal(err)
			}
			for _, j := range jobRows(t, e.Store, KindRefresh) {
				if j.queue != QueueEvents {
					t.Errorf("a refresh in queue %q, want %q", j.queue, QueueEvents)
				}
			}
			if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.ExecContext(ctx, `DELETE FROM river_job WHERE kind = ?`, KindRemediate)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if err := d.remediate(ctx, scope, nil, "ev-1", 1, priorityEvent); err != nil {
				t.Fatal(err)
			}
			fresh := jobRows(t, e.Store, KindRemediate)
			if len(fresh) != 2 {
				t.Fatalf("%d fixes queued by the event alone, want 2", len(fresh))
			}
			for _, j := range fresh {
				if j.priority != priorityEvent || j.queue != QueueEvents {
					t.Errorf("an event's new fix in queue %q at priority %d, want %q at %d", j.queue, j.priority, QueueEvents, priorityEvent)
				}
			}
		})
	}
}

type queuedJob struct {
	queue    string
	priority int
}

// jobRows lists the kind's jobs in the queue's table, in order.
func jobRows(t *testing.T, st *store.Store, kind string) []queuedJob {
	t.Helper()
	var out []queuedJob
	err := st.Read(context.Background(), func(q *store.Reader) error {
		var err error
		out, err = store.QueryAll(context.Background(), q, func(rows *sql.Rows) (queuedJob, error) {
			var j queuedJob
			err := rows.Scan(&j.queue, &j.priority)
			return j, err
		}, `SELECT queue, priority FROM river_job WHERE kind = ? ORDER BY id`, kind)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
