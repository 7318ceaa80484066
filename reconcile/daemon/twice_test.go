package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// River runs a job at least once: a replica that dies after the work but before the
// job is marked done runs it again. Each kind of job is run twice here, by hand, with
// the same arguments: the second run changes nothing in the cloud, the findings, the
// queue or the audit log beyond what the first did.
func TestJobs_runTwiceChangeNothingMore(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := remediatetest.Start(t, dsn(t), remediatetest.World(2),
				gates.Config{Auto: []findings.Risk{findings.RiskLow, findings.RiskMedium}}, remediatetest.Options{})
			d := unstarted(t, e)
			scopes, err := e.Reader.Scopes(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ec2 string
			for _, sc := range scopes {
				if sc.Service == "ec2" && ec2 == "" {
					ec2 = sc.ID
				}
			}
			if ec2 == "" {
				t.Fatalf("no EC2 scope among %v", scopes)
			}
			twice := func(what string, work func() error) (first, second counts) {
				t.Helper()
				if err := work(); err != nil {
					t.Fatalf("%s, first run: %v", what, err)
				}
				first = count(t, e.Store, e.Sim.WriteCount())
				if err := work(); err != nil {
					t.Fatalf("%s, second run: %v", what, err)
				}
				second = count(t, e.Store, e.Sim.WriteCount())
				if !first.same(second) {
					t.Errorf("%s run twice: after the first %+v, after the second %+v", what, first, second)
				}
				return first, second
			}

			collect := &collectWorker{d: d}
			c, _ := twice("collect", func() error {
				return collect.Work(ctx, job(1, CollectArgs{Target: "aws", Scope: ec2, Accounts: e.Accounts, Reason: "test", Correlation: "t-1"}))
			})
			if c.opened == 0 || c.jobs[KindRemediate] == 0 {
				t.Fatalf("the collection opened %d findings and queued %v: the world has open SSH", c.opened, c.jobs)
			}

			var args []RemediateArgs
			for _, raw := range queued(t, e.Store, KindRemediate) {
				var a RemediateArgs
				if err := json.Unmarshal(raw, &a); err != nil {
					t.Fatal(err)
				}
				args = append(args, a)
			}
			fix := &remediateWorker{d: d}
			for i, a := range args {
				r, _ := twice("remediate "+a.Action, func() error { return fix.Work(ctx, job(int64(10+i), a)) })
				if r.writes == 0 {
					t.Errorf("remediate %s wrote nothing to the cloud", a.Action)
				}
				act, err := d.o.Machine.Action(ctx, a.Action)
				if err != nil || act.State != remediate.StateVerified {
					t.Fatalf("action %s: %+v, %v", a.Action, act, err)
				}
			}

			// The fixed groups, read again alone: their findings are resolved once.
			var uids []string
			for _, a := range args {
				uids = append(uids, a.Plan.Actions[0].Target)
			}
			refresh := &refreshWorker{d: d}
			before := count(t, e.Store, e.Sim.WriteCount())
			r, _ := twice("refresh", func() error {
				for i, uid := range uids {
					if err := refresh.Work(ctx, job(int64(100+i), RefreshArgs{Target: "aws", UID: uid, Source: "evt-1", Scope: ec2, Accounts: e.Accounts})); err != nil {
						return err
					}
				}
				return nil
			})
			if r.resolved-before.resolved != len(uids) {
				t.Errorf("refresh resolved %d findings, want %d", r.resolved-before.resolved, len(uids))
			}
			// The tick's correlation id follows into the audit entries of the findings it
			// opened and of every step of the fixes it planned.
			err = e.Store.Read(ctx, func(q *store.Reader) error {
				rows, err := q.QueryContext(ctx, `SELECT kind, data FROM audit_entries WHERE kind = ? OR kind LIKE 'action.%'`, audit.KindFindingOpened)
				if err != nil {
					return err
				}
				defer rows.Close()
				n := 0
				for rows.Next() {
					var kind, data string
					if err := rows.Scan(&kind, &data); err != nil {
						return err
					}
					n++
					if !strings.Contains(data, `"correlation":"t-1"`) {
						t.Errorf("%s entry without the tick's correlation: %s", kind, data)
					}
				}
				if n < c.opened {
					t.Errorf("%d entries checked, want at least the %d findings opened", n, c.opened)
				}
				return rows.Err()
			})
			if err != nil {
				t.Fatal(err)
			}
			e.VerifyAudit(t)
		})
	}
}

func job[T river.JobArgs](id int64, args T) *river.Job[T] {
	return &river.Job[T]{JobRow: &rivertype.JobRow{ID: id, Kind: args.Kind(), Attempt: 1, MaxAttempts: 8}, Args: args}
}

// counts are what a job may change: the cloud's writes, the findings opened and
// resolved (audited), the audit log's size, and the unfinished jobs by kind.
type counts struct {
	writes, opened, resolved, entries int
	jobs                              map[string]int
}

func (c counts) same(o counts) bool {
	a, _ := json.Marshal(c.jobs)
	b, _ := json.Marshal(o.jobs)
	return c.writes == o.writes && c.opened == o.opened && c.resolved == o.resolved && c.entries == o.entries && string(a) == string(b)
}

func count(t *testing.T, st *store.Store, writes int) counts {
	t.Helper()
	c := counts{writes: writes, jobs: map[string]int{}}
	err := st.Read(context.Background(), func(q *store.Reader) error {
		if err := q.QueryRowContext(context.Background(), `SELECT
			COALESCE(SUM(CASE WHEN kind = ? THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN kind = ? THEN 1 ELSE 0 END), 0), COUNT(*)
			FROM audit_entries`, audit.KindFindingOpened, audit.KindFindingResolved).Scan(&c.opened, &c.resolved, &c.entries); err != nil {
			return err
		}
		rows, err := q.QueryContext(context.Background(), `SELECT kind, COUNT(*) FROM river_job WHERE state IN ('available', 'scheduled', 'retryable') GROUP BY kind`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			var n int
			if err := rows.Scan(&k, &n); err != nil {
				return err
			}
			c.jobs[k] = n
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// queued returns the encoded args of the kind's jobs waiting in the queue.
func queued(t *testing.T, st *store.Store, kind string) [][]byte {
	t.Helper()
	var out [][]byte
	err := st.Read(context.Background(), func(q *store.Reader) error {
		// River keeps args as JSONB on both databases.
		col := "args::text"
		if st.Dialect() == "sqlite" {
			col = "json(args)"
		}
		rows, err := q.QueryContext(context.Background(), `SELECT `+col+` FROM river_job WHERE kind = ? ORDER BY id`, kind)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var b []byte
			if err := rows.Scan(&b); err != nil {
				return err
			}
			out = append(out, b)
		}
		return rows.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
