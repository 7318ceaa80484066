package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/faultsuite"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// The database faults of the fault-injection suite (docs/faults.md): `warden serve`
// replicas on a PostgreSQL server of the test's own, which the test crashes and
// restarts, or from which it cuts one replica off. Each time the daemon must recover
// by itself (no restart of warden), and lose, double or half-apply nothing: every fix
// is written to the cloud exactly once and verified once, every job finishes, and the
// audit log verifies.

// faultGroups is how many security groups open to SSH the database-fault worlds hold:
// enough fixes that a fault lands between some of them.
const faultGroups = 6

// faultConfig is the daemon's configuration under database faults: fixes of medium risk
// apply without approval, and a job whose replica lost the database is handed to
// another after 10 s (the default 15 minutes would outlast the test).
const faultConfig = "gates:\n  auto: [low, medium]\ndaemon:\n  job_timeout: 5s\n  rescue_after: 10s\n"

const faultToken = "faults-test-token-0123456789abcdef0123456789"

// faultServe starts a `warden serve` replica on dsn against the simulator at simURL,
// sweeping the account at start, and returns it with its replica id.
func faultServe(t *testing.T, simURL, cfg, dsn string) (*served, string) {
	t.Helper()
	s := startServeEnv(t, simURL, []string{"serve", "--listen", "127.0.0.1:0", "--db", dsn, "--config", cfg, "--aws", "--region", "us-east-1",
		"--schedule", "@every 1h", "--log-level", "info"}, "WARDEN_EVENTS_TOKEN="+faultToken)
	named := regexp.MustCompile(`reconciling as replica (\S+)`)
	id := waitFor(t, "the replica to name itself", func() (string, bool) {
		m := named.FindStringSubmatch(s.output())
		if m == nil {
			return "", false
		}
		return m[1], true
	})
	return s, id
}

// readyz is the status /readyz answers (0 when it cannot be reached).
func readyz(base string) int {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(base + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// alive fails the test if the replica exited: the daemon must ride a database fault out.
func alive(t *testing.T, s *served, what string) {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		t.Fatalf("%s exited (%v) instead of recovering by itself:\n%s", what, err, tail(s.output(), 60))
	default:
	}
}

// faultWorld is the simulated account and the files of a database-fault test.
func faultWorld(t *testing.T) (*cloudsim.Sim, string, string) {
	t.Helper()
	cr := startChildRun(t, crashWorld(faultGroups), faultConfig)
	return cr.sim, cr.url, cr.cfg
}

// converged waits until every group is closed in the simulator and every action the
// store holds is verified.
func converged(t *testing.T, sim *cloudsim.Sim, db *sql.DB, timeout time.Duration) {
	t.Helper()
	waitLong(t, "every fix applied and verified", timeout, func() (string, bool) {
		open := 0
		sim.Do(func(w *cloudsim.World) {
			for _, g := range w.AWS.Accounts[0].SecurityGroups {
				for _, r := range g.Ingress {
					if r.CIDR == "0.0.0.0/0" {
						open++
					}
				}
			}
		})
		states := map[string]int{}
		rows, err := db.Query(`SELECT state FROM actions`)
		if err != nil {
			return err.Error(), false
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				return err.Error(), false
			}
			states[s]++
			n++
		}
		return fmt.Sprintf("%d rules open, actions %v", open, states), open == 0 && n > 0 && states["verified"] == n
	})
}

// checkOnce asserts what a database fault must not break, from the simulator's counters
// and the database: one write per action (nothing doubled, nothing lost), every action
// verified with one intent and one outcome in the audit log, every finding opened once,
// no job left unfinished or given up, and an audit log that verifies.
func checkOnce(t *testing.T, sim *cloudsim.Sim, dsn string, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	// A job whose attempt the fault broke is retried with River's backoff (16 s after a
	// second attempt): none is lost, none is given up.
	start := time.Now()
	waitLong(t, "every job to finish", 60*time.Second, func() (string, bool) {
		for _, j := range queueJobs(t, db, riverTables(t, db), 0) {
			if j.Kind != daemon.KindCheckpoint && j.State != "completed" {
				return fmt.Sprintf("job %d (%s %s) is %s after %d attempts by %v", j.ID, j.Kind, j.Scope, j.State, j.Attempt, j.AttemptedBy), false
			}
		}
		return "", true
	})
	t.Logf("every job finished (waited %v for the last retries)", time.Since(start).Round(time.Millisecond))
	var actions int
	if err := db.QueryRow(`SELECT COUNT(*) FROM actions`).Scan(&actions); err != nil {
		t.Fatal(err)
	}
	// Each action of this world is one write: a revoke, or the password policy.
	if n := sim.WriteCount(); n != actions {
		t.Errorf("%d writes to the cloud for %d actions: want exactly one each (%v)", n, actions, sim.Writes())
	}
	if n := sim.Writes()["ec2:RevokeSecurityGroupIngress"]; n < faultGroups {
		t.Errorf("%d revokes, want at least one per open group (%d)", n, faultGroups)
	}
	counts := map[string]map[string]int{}
	rows, err := db.Query(`SELECT subject, kind, COUNT(*) FROM audit_entries WHERE kind IN ($1, $2, $3, $4) GROUP BY subject, kind`,
		audit.KindActionIntent, audit.KindActionVerified, audit.KindActionFailed, audit.KindFindingOpened)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var subject, kind string
		var n int
		if err := rows.Scan(&subject, &kind, &n); err != nil {
			t.Fatal(err)
		}
		if counts[kind] == nil {
			counts[kind] = map[string]int{}
		}
		counts[kind][subject] = n
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(counts[audit.KindActionVerified]) != actions {
		t.Errorf("%d actions verified in the audit log, want %d", len(counts[audit.KindActionVerified]), actions)
	}
	for id, n := range counts[audit.KindActionVerified] {
		if n != 1 || counts[audit.KindActionIntent][id] != 1 || counts[audit.KindActionFailed][id] != 0 {
			t.Errorf("action %s: %d intents, %d verified, %d failed in the audit log: want one intent and one outcome",
				id, counts[audit.KindActionIntent][id], n, counts[audit.KindActionFailed][id])
		}
	}
	for subject, n := range counts[audit.KindFindingOpened] {
		if n != 1 {
			t.Errorf("finding %s opened %d times", subject, n)
		}
	}
	st, err := store.OpenExisting(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audit.New(st, audit.Options{Signer: signer}).Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	report, err := audit.New(st, audit.Options{}).Verify(ctx, verifier)
	if err != nil {
		t.Errorf("audit verify: %v", err)
	}
	t.Logf("%d actions, writes %v, audit log intact: %d entries", actions, sim.Writes(), report.Entries)
}

// newJobsDone waits until a sweep enqueued after job id after has completed with every
// collection it caused, worked by the replica named by (any when ""). A collection the
// sweep found already queued (by a pass that began just before, such as the one a
// replica's schedule runs when it becomes leader again after the database came back)
// is one it caused, whatever its id: so every collection in the queue must be done, and
// at least one after the sweep's.
func newJobsDone(t *testing.T, db *sql.DB, after int64, by string, timeout time.Duration) {
	t.Helper()
	waitLong(t, "a new pass to complete", timeout, func() (string, bool) {
		js := queueJobs(t, db, riverTables(t, db), 0)
		sweeps, collects, mine := 0, 0, 0
		for _, j := range js {
			if j.Kind != daemon.KindCollect && j.Kind != daemon.KindSweep {
				continue
			}
			switch j.State {
			case "available", "pending", "retryable", "running", "scheduled":
				return fmt.Sprintf("job %d %s is %s", j.ID, j.Kind, j.State), false
			}
			if j.ID <= after || j.State != "completed" {
				continue
			}
			if j.Kind == daemon.KindSweep {
				sweeps++
			} else {
				collects++
			}
			if n := len(j.AttemptedBy); n > 0 && j.AttemptedBy[n-1] == by {
				mine++
			}
		}
		return fmt.Sprintf("%d sweeps, %d collections completed, %d by %q", sweeps, collects, mine, by),
			sweeps > 0 && collects >= 1 && (by == "" || mine > 0)
	})
}

// recoveredFixes counts the fixes found in place after an interruption (a write whose
// outcome could not be recorded) and verified without a second write.
func recoveredFixes(t *testing.T, db *sql.DB) int {
	t.Helper()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM audit_entries WHERE kind = $1 AND data LIKE $2`, audit.KindActionVerified, `%"recovered":true%`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func maxJobID(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var id int64
	for _, j := range queueJobs(t, db, riverTables(t, db), 0) {
		id = max(id, j.ID)
	}
	return id
}

// PostgreSQL crashes (immediate shutdown: every connection cut, no checkpoint) in the
// middle of the daemon's pass, stays down a moment, and comes back. The replica goes
// unready and ready again by itself, finishes the pass (a job whose end could not be
// recorded is rescued), makes its next pass, and wrote each fix once.
func TestFaults_postgresRestartedMidPass(t *testing.T) {
	if testing.Short() {
		t.Skip("a PostgreSQL server crashed and restarted under a replica: about half a minute")
	}
	pg := faultsuite.StartPostgres(t)
	sim, simURL, cfg := faultWorld(t)
	// Slow calls, so that the crash lands between the pass's fixes.
	sim.SetLatency(60 * time.Millisecond)
	s, id := faultServe(t, simURL, cfg, pg.DSN)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("replica %s said:\n%s\nPostgreSQL said:\n%s", id, tail(s.output(), 80), tail(pg.Log(), 30))
		}
	})
	waitLong(t, "the pass to be between its fixes", 30*time.Second, func() (map[string]int, bool) {
		return sim.Writes(), sim.Writes()["ec2:RevokeSecurityGroupIngress"] >= 2
	})
	pg.Stop(t, "immediate")
	crashedAt := time.Now()
	before := sim.Writes()["ec2:RevokeSecurityGroupIngress"]
	waitLong(t, "/readyz to say unready while the database is down", 20*time.Second, func() (int, bool) {
		code := readyz(s.url)
		return code, code == http.StatusServiceUnavailable
	})
	alive(t, s, "the replica")
	pg.Start(t)
	sim.SetLatency(0)
	waitLong(t, "/readyz to say ready again", 30*time.Second, func() (int, bool) {
		code := readyz(s.url)
		return code, code == http.StatusOK
	})
	t.Logf("crashed after %d revokes; ready again %v after the crash", before, time.Since(crashedAt).Round(time.Millisecond))
	if before >= faultGroups {
		t.Fatalf("the crash came after the pass's last fix (%d revokes): it tests nothing", before)
	}

	db, _ := storetest.RawDB(t, pg.DSN)
	converged(t, sim, db, 90*time.Second)
	alive(t, s, "the replica")
	// The next pass, asked for now, runs on the same process.
	after := maxJobID(t, db)
	sweepNow(t, s.url, faultToken)
	newJobsDone(t, db, after, id, 30*time.Second)
	checkOnce(t, sim, pg.DSN, db)
	t.Logf("%d fixes interrupted by the crash were found in place and verified without a second write", recoveredFixes(t, db))
	s.stop(t)
}

// One replica of two reaches PostgreSQL through a proxy, which the test cuts in the
// middle of a pass: the other replica takes the lead and the partitioned replica's jobs
// over, and finishes the pass; nothing is written twice. Once the link is back, the
// partitioned replica is ready again and works jobs by itself.
func TestFaults_replicaPartitionedFromPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("a replica cut off from PostgreSQL and rescued: about a minute")
	}
	pg := faultsuite.StartPostgres(t)
	proxy := faultsuite.StartProxy(t, fmt.Sprintf("127.0.0.1:%d", pg.Port))
	u, err := url.Parse(pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = proxy.Addr
	viaProxy := u.String()
	sim, simURL, cfg := faultWorld(t)
	db, _ := storetest.RawDB(t, pg.DSN)

	// The replica to be cut off starts alone and leads: its schedule's pass plans the
	// fixes, and its workers take the first of them. Slow revokes keep them running.
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Action: "RevokeSecurityGroupIngress", Latency: cloudsim.Duration(2 * time.Second)}}, nil); err != nil {
		t.Fatal(err)
	}
	cut, cutID := faultServe(t, simURL, cfg, viaProxy)
	q := riverTables(t, db)
	// The cut lands while a revoke is in flight (the simulator counts a call when it
	// arrives, before its latency), not during the reads a fix makes before it writes.
	busy := waitLong(t, "the first replica to apply a fix", 30*time.Second, func() (queueJob, bool) {
		if sim.Calls()["ec2:RevokeSecurityGroupIngress"].Calls == 0 {
			return queueJob{}, false
		}
		for _, j := range queueJobs(t, db, q, 0) {
			if n := len(j.AttemptedBy); n > 0 && j.AttemptedBy[n-1] == cutID && j.State == "running" && j.Kind == daemon.KindRemediate {
				return j, true
			}
		}
		return queueJob{}, false
	})
	if l := leaderOf(t, db, q); l != cutID {
		t.Fatalf("the leader is %q, want the first replica %s", l, cutID)
	}
	other, otherID := faultServe(t, simURL, cfg, pg.DSN)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("partitioned replica %s said:\n%s\nother replica %s said:\n%s", cutID, tail(cut.output(), 60), otherID, tail(other.output(), 60))
		}
	})
	proxy.Cut()
	cutAt := time.Now()
	t.Logf("cut %s off while it ran job %d (%s %s); writes so far %v", cutID, busy.ID, busy.Kind, busy.Scope, sim.Writes())
	waitLong(t, "the partitioned replica to say unready", 20*time.Second, func() (int, bool) {
		code := readyz(cut.url)
		return code, code == http.StatusServiceUnavailable
	})
	if err := sim.SetFaults(nil, nil); err != nil {
		t.Fatal(err)
	}
	leader := waitLong(t, "the other replica to take the lead", 60*time.Second, func() (string, bool) {
		l := leaderOf(t, db, q)
		return l, l == otherID
	})
	t.Logf("%s leads %v after the cut", leader, time.Since(cutAt).Round(time.Millisecond))
	converged(t, sim, db, 90*time.Second)
	t.Logf("the pass finished %v after the cut", time.Since(cutAt).Round(time.Millisecond))
	alive(t, cut, "the partitioned replica")

	proxy.Restore()
	waitLong(t, "the partitioned replica to say ready again", 30*time.Second, func() (int, bool) {
		code := readyz(cut.url)
		return code, code == http.StatusOK
	})
	// With the other replica gone, the next pass can only be worked by the one that was
	// cut off: it resumed by itself.
	other.stop(t)
	after := maxJobID(t, db)
	sweepNow(t, cut.url, faultToken)
	newJobsDone(t, db, after, cutID, 60*time.Second)
	checkOnce(t, sim, pg.DSN, db)
	// The fix the partitioned replica was making when it was cut off was written, and
	// its outcome never recorded there: another replica found it in place.
	recovered := recoveredFixes(t, db)
	if recovered == 0 {
		t.Errorf("no fix was resolved after an interruption: the cut did not land between a write and its record")
	}
	t.Logf("%d fixes found in place after the cut and verified without a second write", recovered)
	cut.stop(t)
	if strings.Contains(cut.output(), "panic") {
		t.Errorf("the partitioned replica panicked:\n%s", tail(cut.output(), 60))
	}
}
