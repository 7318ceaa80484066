package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/internal/cloudsim/simtest"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// replicaRegions are the regions every account of the replicas' organisation reads.
var replicaRegions = []string{"eu-west-1", "us-east-1"}

// replicaOpenGroups is how many groups each account opens to SSH in us-east-1.
const replicaOpenGroups = 2

// Three `warden serve` replicas on one PostgreSQL database, as a scale-out deployment
// runs them: the leader's start-up sweep collects every scope of the organisation once,
// the replicas share the work, and each auto fix is applied once. A replica SIGKILLed in
// the middle of a collection leaves its job running; the queue rescues it after
// daemon.rescue_after and another replica finishes it, and nothing is collected,
// opened or fixed twice. The survivors' /metrics agree with the queue's table, warden
// status names a surviving leader, and SIGTERM stops the survivors cleanly.
func TestReplicas_oneKilledMidJobIsRescuedAndNothingRunsTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("half a minute of replicas, kills and rescues")
	}
	fresh, ok := storetest.Backends(t)["postgres"]
	if !ok {
		t.Skip("the replicas share their queue through PostgreSQL: set WARDEN_TEST_POSTGRES")
	}
	dsn := fresh(t)
	db, _ := storetest.RawDB(t, dsn)
	ctx := context.Background()

	// Account ids of this run only: should River's tables be shared (riverTables), the
	// test's jobs are told apart by their scopes, and their unique keys (scope, action)
	// never meet another run's.
	first := 100_000_000_000 + rand.Int64N(800_000_000_000)
	accounts := []string{fmt.Sprintf("%012d", first), fmt.Sprintf("%012d", first+1), fmt.Sprintf("%012d", first+2)}
	slow, added := accounts[1], accounts[2] // the account whose IAM read is killed; the one that opens a group between ticks
	mine := func(scope string) bool {
		return slices.ContainsFunc(accounts, func(a string) bool { return strings.HasPrefix(scope, "aws/"+a+"/") })
	}
	var scopes []string
	for _, a := range accounts {
		scopes = append(scopes, "aws/"+a+"/iam")
		for _, r := range replicaRegions {
			scopes = append(scopes, "aws/"+a+"/ec2/"+r, "aws/"+a+"/acm/"+r)
		}
	}
	slices.Sort(scopes)
	slowScope := "aws/" + slow + "/iam"

	calls := &callLog{n: map[string]int{}}
	sim, simURL := simtest.Start(t, replicaWorld(accounts), cloudsim.Options{Logger: slog.New(calls)})
	dir := t.TempDir()
	cfg := filepath.Join(dir, "warden.yaml")
	config := "gates:\n  auto: [low, medium]\ndaemon:\n  job_timeout: 5s\n  rescue_after: 10s\n" +
		// A key unused for 60 days is stale (medium, auto), yet not old enough to rotate
		// (high: it would wait for an approval and keep its job snoozing).
		"settings:\n  access_key_unused_days: 30\n"
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "replicas-test-token-0123456789abcdef012345"
	args := []string{"serve", "--listen", "127.0.0.1:0", "--db", dsn, "--config", cfg, "--aws-org",
		"--region", replicaRegions[0], "--region", replicaRegions[1], "--schedule", "@every 1h", "--log-level", "info"}

	// Slow calls while the replicas start one after the other, so that the leader's
	// start-up sweep is still being worked when the others join it.
	sim.SetLatency(150 * time.Millisecond)
	started := time.Now()
	var reps []*served
	var ids []string
	named := regexp.MustCompile(`reconciling as replica (\S+)`)
	for range 3 {
		s := startServeEnv(t, simURL, args, "WARDEN_EVENTS_TOKEN="+token)
		reps = append(reps, s)
		ids = append(ids, waitFor(t, "the replica to name itself", func() (string, bool) {
			m := named.FindStringSubmatch(s.output())
			if m == nil {
				return "", false
			}
			return m[1], true
		}))
	}
	sim.SetLatency(0)
	t.Logf("3 replicas ready in %v: %v", time.Since(started).Round(time.Millisecond), ids)
	q := riverTables(t, db)
	t.Cleanup(func() {
		if t.Failed() {
			for i, s := range reps {
				t.Logf("replica %d (%s) said:\n%s", i, ids[i], tail(s.output(), 60))
			}
		}
	})
	replica := func(id string) int { return slices.Index(ids, id) }

	// Tick 1, the leader's RunOnStart sweep: every scope collected, every fix applied.
	wantTick1 := map[string]int{"ec2:RevokeSecurityGroupIngress": len(accounts) * replicaOpenGroups, "iam:UpdateAccountPasswordPolicy": len(accounts)}
	jobs := waitLong(t, "the start-up sweep to collect every scope and apply every fix", 60*time.Second, func() ([]queueJob, bool) {
		js := queueJobs(t, db, q, 0)
		return js, len(collections(js, mine, "")) >= len(scopes) && settled(js, mine) && writesReached(sim, wantTick1)
	})
	byTick := collectionsByTick(jobs, mine)
	if len(byTick) != 1 {
		t.Fatalf("collections of %d ticks after the start, want the leader's sweep alone: %v", len(byTick), keys(byTick))
	}
	tick1 := keys(byTick)[0]
	if !strings.HasPrefix(tick1, "tick-aws-") {
		t.Errorf("the first collections were asked by %q, want the schedule's start-up tick", tick1)
	}
	checkTick(t, "tick 1", byTick[tick1], scopes)
	for _, j := range byTick[tick1] {
		if j.Attempt != 1 {
			t.Errorf("tick 1 collected %s in %d attempts, want 1", j.Scope, j.Attempt)
		}
	}
	t.Logf("tick 1 in %v: jobs by replica %v", time.Since(started).Round(time.Millisecond), perReplica(jobs, mine, ids))
	if w := sim.Writes(); w["ec2:RevokeSecurityGroupIngress"] != wantTick1["ec2:RevokeSecurityGroupIngress"] ||
		w["iam:UpdateAccountPasswordPolicy"] != wantTick1["iam:UpdateAccountPasswordPolicy"] || sim.WriteCount() != len(accounts)*(replicaOpenGroups+1) {
		t.Errorf("tick 1 writes %v, want %v and nothing else", w, wantTick1)
	}
	var tick1Max int64
	for _, j := range jobs {
		tick1Max = max(tick1Max, j.ID)
	}

	// Between the ticks the world drifts: a stale access key in the account whose IAM
	// read will be killed, a group opened to SSH in another account.
	const staleKey = "AKIAREPLICASSTALE001"
	now := time.Now().UTC()
	sim.Do(func(w *cloudsim.World) {
		for _, a := range w.AWS.Accounts {
			switch a.ID {
			case slow:
				// Status in full: the world's defaults are filled in when it is loaded, not
				// for what a test adds later.
				a.Users = append(a.Users, &cloudsim.User{Name: "old-deployer", Path: "/", ID: "AIDAREPLICAS0LDDEPL0", Created: now.AddDate(0, 0, -60),
					AccessKeys: []*cloudsim.AccessKey{{ID: staleKey, Status: "Active", Created: now.AddDate(0, 0, -60)}}})
			case added:
				a.SecurityGroups = append(a.SecurityGroups, openGroup(slices.Index(accounts, added), 9, "eu-west-1"))
			}
		}
	})
	// The slow account's IAM calls hang (far longer than job_timeout), so that its
	// collection is surely running when its replica is killed.
	if err := sim.SetFaults([]cloudsim.Fault{{Service: "iam", Account: slow, Latency: cloudsim.Duration(30 * time.Second)}}, nil); err != nil {
		t.Fatal(err)
	}
	sweepNow(t, reps[0].url, token)

	// Find the replica reading the slow scope; wait (within job_timeout) until that is
	// all it runs, so that the kill takes that one job down, and kill it.
	victim := waitLong(t, "the slow scope's collection to run", 20*time.Second, func() (queueJob, bool) {
		for _, j := range queueJobs(t, db, q, tick1Max) {
			if j.Kind == daemon.KindCollect && j.Scope == slowScope && j.State == "running" && len(j.AttemptedBy) > 0 {
				return j, true
			}
		}
		return queueJob{}, false
	})
	killedID := victim.AttemptedBy[len(victim.AttemptedBy)-1]
	k := replica(killedID)
	if k < 0 {
		t.Fatalf("the slow scope runs on %q, not one of the replicas %v", killedID, ids)
	}
	alone := time.Now().Add(3 * time.Second)
	for time.Now().Before(alone) {
		busy := 0
		for _, j := range queueJobs(t, db, q, tick1Max) {
			if j.State == "running" && j.ID != victim.ID && len(j.AttemptedBy) > 0 && j.AttemptedBy[len(j.AttemptedBy)-1] == killedID {
				busy++
			}
		}
		if busy == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	leaderBefore := leaderOf(t, db, q)
	if err := reps[k].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	select {
	case <-reps[k].done:
	case <-time.After(10 * time.Second):
		t.Fatalf("replica %s did not die of SIGKILL", killedID)
	}
	if err := sim.SetFaults(nil, nil); err != nil {
		t.Fatal(err)
	}
	leaderKilled := leaderBefore == killedID
	t.Logf("killed replica %d (%s, leader: %v) %v after its attempt at %s began", k, killedID, leaderKilled,
		killedAt.Sub(victim.AttemptedAt).Round(time.Millisecond), slowScope)
	var survivors []int
	for i := range reps {
		if i != k {
			survivors = append(survivors, i)
		}
	}

	// While the killed job waits for its rescue, the queue is not empty: its depth, as
	// every survivor reports it, is the store's.
	depth := waitLong(t, "warden_queue_jobs to match the queue on every survivor", 5*time.Second, func() (string, bool) {
		want := depthOf(t, db, q)
		if want[`warden_queue_jobs{kind="`+daemon.KindCollect+`",state="running"}`] == 0 {
			return fmt.Sprintf("no collection running in the queue %v", want), false
		}
		for _, i := range survivors {
			got := map[string]float64{}
			for key, v := range scrape(t, reps[i].url) {
				if strings.HasPrefix(key, "warden_queue_jobs{") && v != 0 {
					got[key] = v
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				return fmt.Sprintf("replica %s: %v, the queue %v", ids[i], got, want), false
			}
		}
		return fmt.Sprint(want), true
	})
	t.Logf("queue while the killed job waits, as every survivor reports it: %s", depth)

	// The rescue: the job stays running until the (possibly new) leader's rescuer takes
	// it for abandoned; then another replica finishes it.
	var rescuedAfter, electedAfter time.Duration
	done := waitLong(t, "the killed collection to be rescued and finished by another replica", 90*time.Second, func() (queueJob, bool) {
		if electedAfter == 0 && leaderKilled {
			if l := leaderOf(t, db, q); l != "" && l != killedID {
				electedAfter = time.Since(killedAt)
			}
		}
		for _, j := range queueJobs(t, db, q, victim.ID-1) {
			if j.ID != victim.ID {
				continue
			}
			if rescuedAfter == 0 && j.State != "running" {
				rescuedAfter = time.Since(killedAt)
			}
			return j, j.State == "completed"
		}
		return queueJob{}, false
	})
	elected := "the leader survived"
	if leaderKilled {
		elected = "new leader in " + electedAfter.Round(time.Millisecond).String()
	}
	t.Logf("after the kill: %s, job rescued in %v, finished in %v (attempt %d by %v)",
		elected, rescuedAfter.Round(time.Millisecond), time.Since(killedAt).Round(time.Millisecond), done.Attempt, done.AttemptedBy)
	if done.Attempt != 2 || len(done.AttemptedBy) != 2 || done.AttemptedBy[0] != killedID || done.AttemptedBy[1] == killedID || replica(done.AttemptedBy[1]) < 0 {
		t.Errorf("the killed collection finished in attempt %d by %v: want attempt 2, by a survivor after %s", done.Attempt, done.AttemptedBy, killedID)
	}

	// Tick 2 settles: every scope collected, the two new fixes applied. A new leader
	// runs its own start-up tick (River keeps schedules in memory): when the killed
	// replica led, a third round of collections comes too.
	wantAll := map[string]int{"ec2:RevokeSecurityGroupIngress": len(accounts)*replicaOpenGroups + 1,
		"iam:UpdateAccountPasswordPolicy": len(accounts), "iam:UpdateAccessKey": 1}
	wantTicks := 2
	if leaderKilled {
		wantTicks = 3
	}
	jobs = waitLong(t, "the second sweep to settle", 60*time.Second, func() ([]queueJob, bool) {
		js := queueJobs(t, db, q, 0)
		return js, len(collectionsByTick(js, mine)) == wantTicks && settled(js, mine) && writesReached(sim, wantAll)
	})
	byTick = collectionsByTick(jobs, mine)
	var tick2 string
	for _, c := range keys(byTick) {
		if strings.HasPrefix(c, "reconcile-") {
			tick2 = c
		}
	}
	checkTick(t, "tick 2", byTick[tick2], scopes)
	for c, js := range byTick {
		checkTick(t, c, js, nil) // any other tick: no scope twice, all finished
	}
	rescued := 0
	for _, j := range jobs {
		if !mine(j.Scope) || j.State != "completed" {
			continue
		}
		// A job the killed replica held is finished by another in a second attempt;
		// every other took one.
		switch last := j.AttemptedBy[len(j.AttemptedBy)-1]; {
		case slices.Contains(j.AttemptedBy, killedID) && last != killedID:
			rescued++
			if j.Attempt != 2 {
				t.Errorf("%s %s, rescued from the killed replica, took %d attempts (%v), want 2", j.Kind, j.Scope, j.Attempt, j.AttemptedBy)
			}
		case j.Attempt != 1:
			t.Errorf("%s %s took %d attempts (%v) without the kill", j.Kind, j.Scope, j.Attempt, j.AttemptedBy)
		}
	}
	t.Logf("ticks %v; jobs by replica %v; %d of the killed replica's jobs finished elsewhere", keys(byTick), perReplica(jobs, mine, ids), rescued)
	if busy := perReplica(jobs, mine, ids); len(busy) < 2 {
		t.Errorf("jobs worked by %v: want several replicas sharing them", busy)
	}

	// Each scope's reads were made once per collection that finished: a killed attempt's
	// calls were abandoned (cancelled in the simulator), never served.
	collected := map[string]int{}
	for _, j := range collections(jobs, mine, "") {
		if j.State == "completed" {
			collected[j.Scope]++
		}
	}
	for _, a := range accounts {
		if got, want := calls.count("iam:GetAccountAuthorizationDetails", a, ""), collected["aws/"+a+"/iam"]; got != want {
			t.Errorf("account %s: IAM read in bulk %d times, want once per finished collection of its IAM (%d)", a, got, want)
		}
		for _, r := range replicaRegions {
			if got, want := calls.count("acm:ListCertificates", a, r), collected["aws/"+a+"/acm/"+r]; got != want {
				t.Errorf("%s/%s: certificates listed %d times, want once per finished collection (%d)", a, r, got, want)
			}
			// Fixes read their group again (drift check, verification): only the
			// regions that had none to fix count their collections' reads alone.
			if r == "eu-west-1" && a != added {
				if got, want := calls.count("ec2:DescribeSecurityGroups", a, r), collected["aws/"+a+"/ec2/"+r]; got != want {
					t.Errorf("%s/%s: security groups described %d times, want once per finished collection (%d)", a, r, got, want)
				}
			}
		}
	}
	cancelled := 0
	for op, c := range sim.Calls() {
		if strings.HasPrefix(op, "iam:") {
			cancelled += c.Cancelled
		}
	}
	if cancelled == 0 {
		t.Errorf("no IAM call was abandoned: the kill did not land in the middle of the slow collection")
	}
	t.Logf("IAM calls abandoned by the kill: %d; bulk IAM reads by account: %d %d %d; writes %v", cancelled,
		calls.count("iam:GetAccountAuthorizationDetails", accounts[0], ""), calls.count("iam:GetAccountAuthorizationDetails", accounts[1], ""),
		calls.count("iam:GetAccountAuthorizationDetails", accounts[2], ""), sim.Writes())

	// Each fix applied once, each finding opened once.
	if w := sim.Writes(); sim.WriteCount() != len(accounts)*(replicaOpenGroups+1)+2 ||
		w["ec2:RevokeSecurityGroupIngress"] != wantAll["ec2:RevokeSecurityGroupIngress"] || w["iam:UpdateAccessKey"] != 1 {
		t.Errorf("writes %v, want exactly %v", w, wantAll)
	}
	sim.Do(func(w *cloudsim.World) {
		for _, a := range w.AWS.Accounts {
			for _, g := range a.SecurityGroups {
				for _, r := range g.Ingress {
					if r.FromPort == 22 && r.CIDR == "0.0.0.0/0" {
						t.Errorf("SSH still open on %s in %s", g.ID, a.ID)
					}
				}
			}
			for _, u := range a.Users {
				for _, key := range u.AccessKeys {
					if key.ID == staleKey && key.Status != "Inactive" {
						t.Errorf("the stale key is %q, want Inactive", key.Status)
					}
				}
			}
		}
	})
	rows, err := db.Query(`SELECT subject, COUNT(*) FROM audit_entries WHERE kind = $1 GROUP BY subject HAVING COUNT(*) > 1`, audit.KindFindingOpened)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var subject string
		var n int
		if err := rows.Scan(&subject, &n); err != nil {
			t.Fatal(err)
		}
		t.Errorf("finding %s opened %d times", subject, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	var staleOpened int
	if err := db.QueryRow(`SELECT COUNT(*) FROM audit_entries WHERE kind = $1 AND data LIKE $2`, audit.KindFindingOpened, "%"+staleKey+"%").Scan(&staleOpened); err != nil {
		t.Fatal(err)
	}
	if staleOpened != 1 {
		t.Errorf("the stale key's finding opened %d times, want once", staleOpened)
	}
	st, err := store.OpenExisting(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	actions, err := remediate.New(remediate.Options{Store: st, Log: audit.New(st, audit.Options{})}).Actions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(accounts)*(replicaOpenGroups+1) + 2; len(actions) != want {
		t.Errorf("%d actions recorded, want %d", len(actions), want)
	}
	for _, a := range actions {
		if a.State != remediate.StateVerified {
			t.Errorf("action %s (%s) is %s: %s", a.ID, a.Remediator, a.State, a.Detail)
		}
	}

	// Three processes appended to one audit log, one of them killed: it is intact.
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(dir, "audit.key"))
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
	t.Logf("audit log intact: %d entries", report.Entries)

	// The survivors' counters agree with the queue's table: each job's end is counted by
	// the replica that ran its last attempt (the killed replica's counts died with it).
	ran := map[string]map[string]int{} // kind → replica → completed jobs
	for _, j := range jobs {
		if !mine(j.Scope) || j.State != "completed" {
			continue
		}
		if ran[j.Kind] == nil {
			ran[j.Kind] = map[string]int{}
		}
		ran[j.Kind][j.AttemptedBy[len(j.AttemptedBy)-1]]++
	}
	metrics := map[int]map[string]float64{}
	for _, i := range survivors {
		metrics[i] = scrape(t, reps[i].url)
	}
	for _, kind := range []string{daemon.KindCollect, daemon.KindRemediate} {
		var counted float64
		want := 0
		for _, i := range survivors {
			counted += metrics[i][`warden_jobs_total{kind="`+kind+`",outcome="completed"}`]
			want += ran[kind][ids[i]]
		}
		if int(counted) != want {
			t.Errorf("the survivors count %v %s jobs completed, the queue %d (and %d by the killed replica)", counted, kind, want, ran[kind][killedID])
		}
	}
	t.Logf("completed by the killed replica, uncounted: %d collections, %d fixes", ran[daemon.KindCollect][killedID], ran[daemon.KindRemediate][killedID])
	// warden status names a surviving leader.
	leader := waitLong(t, "warden status to name a surviving leader", 30*time.Second, func() (string, bool) {
		out, err := wardenChild(simURL, "status", "--format", "json", "--db", dsn).Output()
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		var s struct{ Leader string }
		if err := json.Unmarshal(out, &s); err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		i := replica(s.Leader)
		return s.Leader, i >= 0 && i != k
	})
	t.Logf("leader before the kill %s, after %s", leaderBefore, leader)

	for _, i := range survivors {
		reps[i].stop(t)
	}
}

// replicaWorld is an organisation of the accounts (the first its management account),
// each reading two regions: in us-east-1 replicaOpenGroups groups open to SSH (medium,
// fixed without approval), in eu-west-1 a group with nothing to fix; a password policy
// too short and remembering no passwords (one low-risk fix without approval: its
// character classes and expiry are fine); and the role the collector assumes in members.
func replicaWorld(accounts []string) *cloudsim.World {
	t0 := time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)
	w := &cloudsim.World{AWS: cloudsim.AWS{Organization: &cloudsim.Organization{ID: "o-replicas01", Management: accounts[0]}}}
	for ai, id := range accounts {
		a := &cloudsim.Account{ID: id, Name: fmt.Sprintf("member-%d", ai), Email: fmt.Sprintf("aws+%d@replicas.example", ai),
			Regions: replicaRegions, Root: cloudsim.Root{MFA: true, Created: t0},
			PasswordPolicy: &cloudsim.PasswordPolicy{MinimumPasswordLength: 8, RequireNumbers: true, RequireSymbols: true,
				RequireUppercaseCharacters: true, RequireLowercaseCharacters: true, MaxPasswordAge: 90}}
		if ai > 0 {
			a.Roles = []*cloudsim.Role{{Name: "OrganizationAccountAccessRole", Created: t0,
				AssumeRolePolicy: cloudsim.Doc(`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::` +
					accounts[0] + `:root"},"Action":"sts:AssumeRole"}]}`)}}
		}
		for i := range replicaOpenGroups {
			a.SecurityGroups = append(a.SecurityGroups, openGroup(ai, i, "us-east-1"))
		}
		a.SecurityGroups = append(a.SecurityGroups, &cloudsim.SecurityGroup{ID: fmt.Sprintf("sg-%02d%015d", ai, 99), Name: "internal",
			Region: "eu-west-1", VPC: "vpc-2", Description: "internal", Ingress: []cloudsim.Rule{
				{Protocol: "tcp", FromPort: 443, ToPort: 443, CIDR: "10.0.0.0/8", Description: "office"}}})
		w.AWS.Accounts = append(w.AWS.Accounts, a)
	}
	return w
}

// openGroup is group i of account number ai, open to SSH from anywhere.
func openGroup(ai, i int, region string) *cloudsim.SecurityGroup {
	id := fmt.Sprintf("sg-%02d%015d", ai, i+1)
	return &cloudsim.SecurityGroup{ID: id, Name: "web-" + id, Region: region, VPC: "vpc-1", Description: "web",
		Ingress: []cloudsim.Rule{{Protocol: "tcp", FromPort: 22, ToPort: 22, CIDR: "0.0.0.0/0", Description: "anywhere"}}}
}

// riverTables is how the test's queries name River's tables: River keeps them in the
// store's schema (the DSN's search_path), or, as daemons before it did, in the
// database's schema warden_river, which every test on the database then shares (the
// test's jobs are told apart by their scopes).
func riverTables(t *testing.T, db *sql.DB) string {
	t.Helper()
	var own bool
	if err := db.QueryRow(`SELECT to_regclass('river_job') IS NOT NULL`).Scan(&own); err != nil {
		t.Fatal(err)
	}
	if own {
		return ""
	}
	t.Logf("River's tables are not in the store's schema: reading them in the shared schema warden_river")
	return "warden_river."
}

// queueJob is a row of River's job table, as far as the test reads it.
type queueJob struct {
	ID                 int64
	Kind, State        string
	Attempt            int
	AttemptedBy        []string
	Scope, Correlation string
	AttemptedAt        time.Time
}

// queueJobs are the jobs of the queue with an id above after, in id order.
func queueJobs(t *testing.T, db *sql.DB, q string, after int64) []queueJob {
	t.Helper()
	rows, err := db.Query(`SELECT id, kind, state, attempt, COALESCE(array_to_string(attempted_by, ' '), ''),
		COALESCE(args->>'scope', ''), COALESCE(args->>'correlation', ''), attempted_at
		FROM `+q+`river_job WHERE id > $1 ORDER BY id`, after)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []queueJob
	for rows.Next() {
		var j queueJob
		var by string
		var at sql.NullTime
		if err := rows.Scan(&j.ID, &j.Kind, &j.State, &j.Attempt, &by, &j.Scope, &j.Correlation, &at); err != nil {
			t.Fatal(err)
		}
		j.AttemptedBy, j.AttemptedAt = strings.Fields(by), at.Time
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// collections are the collect jobs of the test's scopes, of one tick (correlation), or
// of all when tick is "".
func collections(js []queueJob, mine func(string) bool, tick string) []queueJob {
	var out []queueJob
	for _, j := range js {
		if j.Kind == daemon.KindCollect && mine(j.Scope) && (tick == "" || j.Correlation == tick) {
			out = append(out, j)
		}
	}
	return out
}

func collectionsByTick(js []queueJob, mine func(string) bool) map[string][]queueJob {
	out := map[string][]queueJob{}
	for _, j := range collections(js, mine, "") {
		out[j.Correlation] = append(out[j.Correlation], j)
	}
	return out
}

// settled reports whether every job of the test's scopes has finished (completed; a
// job snoozing for an approval would be a fix the test did not expect).
func settled(js []queueJob, mine func(string) bool) bool {
	n := 0
	for _, j := range js {
		if !mine(j.Scope) {
			continue
		}
		n++
		if j.State != "completed" {
			return false
		}
	}
	return n > 0
}

func writesReached(sim *cloudsim.Sim, want map[string]int) bool {
	w := sim.Writes()
	for op, n := range want {
		if w[op] < n {
			return false
		}
	}
	return true
}

// checkTick checks that one tick collected no scope twice and finished each, and, with
// want, exactly those scopes.
func checkTick(t *testing.T, tick string, js []queueJob, want []string) {
	t.Helper()
	var got []string
	for _, j := range js {
		if slices.Contains(got, j.Scope) {
			t.Errorf("%s collected %s twice", tick, j.Scope)
		}
		got = append(got, j.Scope)
		if j.State != "completed" {
			t.Errorf("%s: the collection of %s is %s", tick, j.Scope, j.State)
		}
	}
	slices.Sort(got)
	if want != nil && !slices.Equal(got, want) {
		t.Errorf("%s collected %v\nwant every scope once: %v", tick, got, want)
	}
}

// perReplica counts the test's jobs by the replica that ran their last attempt.
func perReplica(js []queueJob, mine func(string) bool, ids []string) map[int]int {
	out := map[int]int{}
	for _, j := range js {
		if mine(j.Scope) && len(j.AttemptedBy) > 0 {
			out[slices.Index(ids, j.AttemptedBy[len(j.AttemptedBy)-1])]++
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// leaderOf is the queue's leader, "" when none.
func leaderOf(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var id string
	err := db.QueryRow(`SELECT leader_id FROM ` + q + `river_leader LIMIT 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// depthOf is the queue's depth as warden_queue_jobs series: the unfinished jobs by kind
// and state, counted straight from River's table.
func depthOf(t *testing.T, db *sql.DB, q string) map[string]float64 {
	t.Helper()
	rows, err := db.Query(`SELECT kind, state, COUNT(*) FROM ` + q + `river_job
		WHERE state IN ('available', 'pending', 'running', 'retryable', 'scheduled') GROUP BY kind, state`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]float64{}
	for rows.Next() {
		var kind, state string
		var n float64
		if err := rows.Scan(&kind, &state, &n); err != nil {
			t.Fatal(err)
		}
		out[`warden_queue_jobs{kind="`+kind+`",state="`+state+`"}`] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scrape reads a replica's /metrics into its samples, by series (name{labels}).
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// waitLong polls f until it reports done, for at most timeout.
func waitLong[T any](t *testing.T, what string, timeout time.Duration, f func() (T, bool)) T {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, ok := f()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; last: %v", timeout, what, v)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// callLog counts the simulator's served calls by operation, account and region, from
// its debug log (one record a call, after its latency: a call its client abandoned
// meanwhile is not served, and not counted; nor is one a fault refused).
type callLog struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *callLog) Enabled(context.Context, slog.Level) bool { return true }

func (c *callLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "call" {
		return nil
	}
	var service, action, account, region string
	refused := false
	r.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case "service":
			service = a.Value.String()
		case "action":
			action = a.Value.String()
		case "account":
			account = a.Value.String()
		case "region":
			region = a.Value.String()
		case "fault":
			refused = a.Value.Bool()
		}
		return true
	})
	if refused {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[service+":"+action+" "+account+" "+region]++
	return nil
}

func (c *callLog) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *callLog) WithGroup(string) slog.Handler      { return c }

// count is how many op calls were served in account (and region, unless "").
func (c *callLog) count(op, account, region string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for k, v := range c.n {
		f := strings.Fields(k)
		if len(f) == 3 && f[0] == op && f[1] == account && (region == "" || f[2] == region) {
			n += v
		}
	}
	return n
}

// sweepNow asks a warden serve for a sweep of the aws target now (POST /v1/reconcile),
// and asks again until a new sweep job is queued: a sweep of the schedule's own, queued
// or running when the request comes, makes the request's a duplicate (queued: false),
// and a caller waiting for a sweep enqueued after the request would wait in vain.
func sweepNow(t *testing.T, base, token string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/reconcile", strings.NewReader(`{"target": "aws"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Queued bool `json:"queued"`
		}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || err != nil {
			t.Fatalf("POST /v1/reconcile: %d, %v; want 202", resp.StatusCode, err)
		}
		if got.Queued {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("POST /v1/reconcile: a sweep was already queued for a minute")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
