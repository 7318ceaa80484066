package main

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/store/storetest"
)

// TestSweepBench is issue 10's scheduled-sweep benchmark: an organisation of 50 simulated
// accounts of about 4,000 resources each (≈200,000), served by a `warden sim` process,
// swept by one `warden serve` on SQLite, one on PostgreSQL and three on PostgreSQL. Each
// run sweeps twice: the first sweep finds everything new (every resource evaluated and
// stored, every finding opened), the second finds nothing changed (what most scheduled
// ticks are). It measures the sweep from River's job table (the first collection's start
// to the last one's end), the jobs per second, the resources evaluated, each process's
// CPU and peak memory, and checks that every scope was read exactly once (the queue and
// the simulator's calls per account) and that every run found the same findings.
//
// It is a test, not a Benchmark: a sweep cannot run b.N times over (the second is another
// measure, not a repetition), and what it reports is a table of several measures and
// processes, not a time per operation. Opt-in, like TestDaemon_driftToFixLatency:
//
//	WARDEN_BENCH_SWEEP=1 WARDEN_TEST_POSTGRES=postgres://… go test ./cmd/warden -run TestSweepBench -v -timeout 60m
//
// WARDEN_BENCH_SWEEP_ACCOUNTS (50) and WARDEN_BENCH_SWEEP_RESOURCES (per account, 4000)
// size the world; WARDEN_BENCH_SWEEP_RUNS ("sqlite:1,postgres:1,postgres:3") picks the
// runs; WARDEN_BENCH_SWEEP_PACING is "none" (default) or "aws" (below), and
// WARDEN_BENCH_SWEEP_LATENCY the simulator's latency a call when paced (20ms);
// WARDEN_BENCH_SWEEP_READERS sets daemon.readers (collections a replica runs at once);
// WARDEN_BENCH_SWEEP_SIM_CACHE the generated accounts the simulator keeps built (64): with
// hundreds of readers, accounts read at once outnumber it, and the simulator spends its
// CPU building them again and again; WARDEN_BENCH_SWEEP_SIM_ANSWERS (MiB, 0) the read
// answers it keeps encoded until their account changes, so that its CPU in an unchanged
// sweep is more nearly a cloud's (none of warden's);
// WARDEN_BENCH_SWEEP_GOMAXPROCS sets each replica's GOMAXPROCS (1: a core each);
// WARDEN_BENCH_SWEEP_MEMORY_LIMIT sets daemon.memory_limit (900MiB; off);
// WARDEN_BENCH_SWEEP_PROFILE=DIR writes a CPU profile of each replica and of the simulator there,
// the first sweep's in FILE and the later sweeps' in FILE.1; WARDEN_BENCH_SWEEP_LOGS=DIR
// writes each replica's log there, at the debug level (why each scope was read in full);
// WARDEN_BENCH_SWEEP_FAULTS (a share, 0) makes that share of the member accounts fail
// their calls, each in turn denied, throttled (half its calls) or failing (half with a
// 5xx): the other accounts are measured as the sweep's, and must finish as they do
// without faults; the failing ones' scopes must not read as clean.
// WARDEN_BENCH_SWEEP_DRIFT (a share, 0) adds a third sweep after that share of the
// resources drifted (POST /_sim/drift): it must evaluate exactly the resources read anew
// (one run only: the drift stays in the world). WARDEN_BENCH_SWEEP_UNCHANGED=N sweeps N
// more times unchanged before it: with WARDEN_BENCH_SWEEP_PROFILE, a profile of mostly
// unchanged sweeps.
//
// Pacing "none": the simulator adds no latency and throttles nothing, and warden's own
// token buckets are raised far above what the run makes, so that the sweep measures
// warden (collection, evaluation, the store, the queue), not a simulated network. Pacing
// "aws": 20 ms per call, warden's default rate limits (IAM 10 calls/s per account), the
// simulator throttling at twice them: a sweep as AWS paces it, where waiting on the
// limits, which replicas can share, may weigh more than the CPU.
//
// Every run is a dry run (--dry-run): a sweep reads, judges, plans and enqueues its fixes,
// whose jobs record each action and ask for the approvals the gates want, and apply
// nothing; nothing is written to the cloud (checked through the simulator's write
// counters). It measures the loop, not the fixes.
func TestSweepBench(t *testing.T) {
	if os.Getenv("WARDEN_BENCH_SWEEP") == "" {
		t.Skip("opt-in benchmark, minutes long: set WARDEN_BENCH_SWEEP=1 (and WARDEN_TEST_POSTGRES for the PostgreSQL runs)")
	}
	b := sweepBenchFromEnv(t)
	dir := t.TempDir()
	worldFile := filepath.Join(dir, "world.yaml")
	started := time.Now()
	want, size, err := writeSweepWorld(worldFile, b.accounts, b.perAccount, b.regions, b.paced, b.latency, b.faults, b.simCache, b.simAnswers)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("world: %d generated accounts of %d roles, %d users, %d security groups over %v (%d bytes of YAML, written in %v)",
		b.accounts, want.roles, want.users, want.groups, b.regions, size, time.Since(started).Round(time.Millisecond))

	sim := startSimProcess(t, worldFile, b.accounts)
	loadPeak := peakOf(t, sim.cmd.Process.Pid) // before any reset: the world's load
	t.Logf("simulator ready in %v (pid %d, %s), peak RSS %d MiB loading the world", sim.ready.Round(time.Millisecond),
		sim.cmd.Process.Pid, sim.url, loadPeak>>10)

	var all []sweepResult
	var runs []sweepRunStats
	for _, r := range b.runs {
		t.Run(fmt.Sprintf("%s_x%d", r.backend, r.replicas), func(t *testing.T) {
			res, st := b.run(t, sim, want, r)
			all = append(all, res...)
			runs = append(runs, st)
		})
	}
	simStats := sim.stop(t)

	// Every run found the same: the same resources, the same findings, fingerprint by
	// fingerprint; the second sweep of each run changed none of them.
	for _, r := range all {
		first := all[0]
		if r.drifted {
			continue // after the drift
		}
		if r.resources != first.resources || r.findingsDigest != first.findingsDigest {
			t.Errorf("%s sweep %d: %d resources, %d findings (%s); %s sweep %d: %d resources, %d findings (%s)",
				r.run, r.sweep, r.resources, r.findings, r.findingsDigest[:12], first.run, first.sweep, first.resources, first.findings, first.findingsDigest[:12])
		}
	}
	t.Logf("simulator over the whole test: %v CPU; peak RSS %d MiB loading the world", simStats.cpu.Round(10*time.Millisecond), loadPeak>>10)
	t.Log("\n" + sweepTable(all, runs, b))
}

// sweepBench is what the benchmark runs, from its environment.
type sweepBench struct {
	accounts, perAccount int
	regions              []string
	paced                bool
	latency              time.Duration // a call's, when paced
	faults, drift        float64
	unchanged            int // unchanged sweeps beyond the second
	readers              int // daemon.readers; 0: the default
	simCache             int // generated accounts the simulator holds built (64)
	simAnswers           int // MiB of encoded answers the simulator keeps (0: none)
	procs                int // each replica's GOMAXPROCS; 0: Go's default
	runs                 []sweepRun
	pgBase               string
}

// sweepRun is one run: a database and a number of `warden serve` replicas.
type sweepRun struct {
	backend  string // sqlite or postgres
	replicas int
}

func sweepBenchFromEnv(t *testing.T) *sweepBench {
	t.Helper()
	b := &sweepBench{accounts: 50, perAccount: 4000, regions: []string{"us-east-1", "eu-west-1", "eu-central-1", "ap-southeast-2"},
		simCache: 64, pgBase: os.Getenv("WARDEN_TEST_POSTGRES")}
	num := func(name string, v *int) {
		if s := os.Getenv(name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive number", name, s)
			}
			*v = n
		}
	}
	num("WARDEN_BENCH_SWEEP_ACCOUNTS", &b.accounts)
	num("WARDEN_BENCH_SWEEP_RESOURCES", &b.perAccount)
	if os.Getenv("WARDEN_BENCH_SWEEP_READERS") != "" {
		num("WARDEN_BENCH_SWEEP_READERS", &b.readers)
	}
	num("WARDEN_BENCH_SWEEP_SIM_CACHE", &b.simCache)
	num("WARDEN_BENCH_SWEEP_SIM_ANSWERS", &b.simAnswers)
	if os.Getenv("WARDEN_BENCH_SWEEP_GOMAXPROCS") != "" {
		num("WARDEN_BENCH_SWEEP_GOMAXPROCS", &b.procs)
	}
	if os.Getenv("WARDEN_BENCH_SWEEP_UNCHANGED") != "" {
		num("WARDEN_BENCH_SWEEP_UNCHANGED", &b.unchanged)
	}
	if f := os.Getenv("WARDEN_BENCH_SWEEP_FAULTS"); f != "" {
		share, err := strconv.ParseFloat(f, 64)
		if err != nil || share < 0 || share >= 1 {
			t.Fatalf("WARDEN_BENCH_SWEEP_FAULTS=%q: want a share of the accounts, from 0 to below 1", f)
		}
		b.faults = share
	}
	if f := os.Getenv("WARDEN_BENCH_SWEEP_DRIFT"); f != "" {
		share, err := strconv.ParseFloat(f, 64)
		if err != nil || share <= 0 || share > 1 {
			t.Fatalf("WARDEN_BENCH_SWEEP_DRIFT=%q: want a share of the resources, above 0 and at most 1", f)
		}
		b.drift = share
	}
	switch p := os.Getenv("WARDEN_BENCH_SWEEP_PACING"); p {
	case "", "none":
	case "aws":
		b.paced, b.latency = true, 20*time.Millisecond
		if l := os.Getenv("WARDEN_BENCH_SWEEP_LATENCY"); l != "" {
			d, err := time.ParseDuration(l)
			if err != nil || d < 0 {
				t.Fatalf("WARDEN_BENCH_SWEEP_LATENCY=%q: want a duration", l)
			}
			b.latency = d
		}
	default:
		t.Fatalf("WARDEN_BENCH_SWEEP_PACING=%q: want none or aws", p)
	}
	runs := os.Getenv("WARDEN_BENCH_SWEEP_RUNS")
	if runs == "" {
		runs = "sqlite:1,postgres:1,postgres:3"
	}
	for _, f := range strings.Split(runs, ",") {
		backend, n, ok := strings.Cut(strings.TrimSpace(f), ":")
		replicas, err := strconv.Atoi(n)
		if !ok || err != nil || replicas < 1 || (backend != "sqlite" && backend != "postgres") || (backend == "sqlite" && replicas > 1) {
			t.Fatalf("WARDEN_BENCH_SWEEP_RUNS: %q: want sqlite:1 or postgres:N", f)
		}
		if backend == "postgres" && b.pgBase == "" {
			t.Logf("run %s skipped: set WARDEN_TEST_POSTGRES", f)
			continue
		}
		b.runs = append(b.runs, sweepRun{backend, replicas})
	}
	if len(b.runs) == 0 {
		t.Skip("no run to do")
	}
	if b.drift > 0 && len(b.runs) > 1 {
		// The drift stays in the world: a second run would start from another one.
		t.Fatalf("WARDEN_BENCH_SWEEP_DRIFT takes one run (WARDEN_BENCH_SWEEP_RUNS), not %d", len(b.runs))
	}
	return b
}

// sweepWant is what the world holds, for the checks: its scopes, and how many
// DescribeSecurityGroups pages (1,000 groups) each region of each account takes.
type sweepWant struct {
	accounts             []string
	scopes               []string
	sgPages              map[string]int // "ACCOUNT REGION" → pages
	roles, users, groups int
	// faulty are the accounts whose calls fail, with how: denied, throttled, 5xx.
	faulty map[string]string
}

// healthyScopes counts the scopes of the accounts whose calls do not fail.
func (w sweepWant) healthyScopes() int {
	n := 0
	for _, sc := range w.scopes {
		if w.healthy(sc) {
			n++
		}
	}
	return n
}

// healthy reports whether scope (aws/ACCOUNT/…) is of an account whose calls do not fail.
func (w sweepWant) healthy(scope string) bool {
	parts := strings.SplitN(scope, "/", 3)
	return len(parts) < 2 || w.faulty[parts[1]] == ""
}

// writeSweepWorld writes the world file of an organisation of n accounts of about size
// resources each, generated by the simulator on demand (aws.organization.generated:
// internal/cloudsim/gen_world.go), the first its management account, and returns what it
// holds and the file's size in bytes. Each account is a cloudsim.LargeAccount of 40%
// roles (a customer-managed policy every tenth), 25% users (5% holding an access key,
// one group per 100) and 30% security groups over the regions (one in 50 open to the
// internet), with the repetition of real organisations (trust, inline policies and rule
// sets from a few templates); members trust the management account through
// OrganizationAccountAccessRole, as the collector assumes. The simulator holds cache
// accounts built at once, whatever n is. faultShare of the member accounts fail their
// calls, chosen evenly among the members and named in the world's faults: in turn
// denied, throttled (half the calls) and failing (half with a 5xx).
//
// Paced, the simulator adds 20 ms to every call and throttles at twice warden's default
// rate limits.
//
// Account ids are drawn anew each run, as in the replicas test: should River's tables be
// shared between tests, this run's jobs never meet another's unique keys.
func writeSweepWorld(path string, n, size int, regions []string, paced bool, latency time.Duration, faultShare float64, simCache, simAnswers int) (sweepWant, int64, error) {
	first := 100_000_000_000 + rand.Int64N(800_000_000_000)
	want := sweepWant{sgPages: map[string]int{}, roles: size * 40 / 100, users: size * 25 / 100, groups: size * 30 / 100}
	for i := range n {
		want.accounts = append(want.accounts, fmt.Sprintf("%012d", first+int64(i)))
	}
	mgmt := want.accounts[0]
	w := &cloudsim.World{AWS: cloudsim.AWS{Organization: &cloudsim.Organization{ID: "o-sweepbench1", Management: mgmt,
		Generated: &cloudsim.GeneratedAccounts{Accounts: n, FirstID: mgmt, Seed: 1, Resources: size, Regions: regions,
			Cache: simCache, AnswerCacheMiB: simAnswers}}}}
	want.faulty = map[string]string{}
	if k := int(math.Round(float64(n-1) * faultShare)); k > 0 {
		kinds := []struct {
			name  string
			fault cloudsim.Fault
		}{{"denied", cloudsim.Fault{AccessDenied: true}}, {"throttled", cloudsim.Fault{ThrottleRate: 0.5}}, {"5xx", cloudsim.Fault{ErrorRate: 0.5}}}
		for i := range k {
			id := want.accounts[1+i*(n-1)/k] // members only, spread evenly
			f := kinds[i%len(kinds)]
			f.fault.Account = id
			w.Faults = append(w.Faults, f.fault)
			want.faulty[id] = f.name
		}
	}
	if paced {
		w.Latency = cloudsim.Duration(latency)
		w.RateLimits = map[string]float64{"iam": 20, "sts": 20, "acm": 20, "ec2": 40, "organizations": 10}
	}
	b, err := w.Marshal()
	if err != nil {
		return want, 0, err
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return want, 0, err
	}
	// Every account spreads its groups over the regions alike: LargeAccount's layout.
	perRegion := map[string]int{}
	for _, g := range (cloudsim.LargeAccount{ID: mgmt, SecurityGroups: want.groups, Regions: regions}).Build().SecurityGroups {
		perRegion[g.Region]++
	}
	for _, id := range want.accounts {
		want.scopes = append(want.scopes, "aws/"+id+"/iam")
		for _, r := range regions {
			want.scopes = append(want.scopes, "aws/"+id+"/ec2/"+r, "aws/"+id+"/acm/"+r)
			want.sgPages[id+" "+r] = max(1, (perRegion[r]+999)/1000)
		}
	}
	slices.Sort(want.scopes)
	return want, int64(len(b)), nil
}

// sweepResult is what one sweep of one run measured.
type sweepResult struct {
	run   string // "postgres ×3"
	sweep int    // 1: everything new; then nothing changed, or the drift (drifted)
	// drifted is the sweep after POST /_sim/drift.
	drifted bool
	// Jobs of the sweep: one sweep job, a collection per scope, a fix per planned action
	// (dry run: it says what it would do).
	collects, fixes int
	// collectWall runs from the first collection's start to the last one's end;
	// sweepWall from the sweep job's start to the last job's end (fixes included).
	collectWall, sweepWall time.Duration
	resources, evaluated   int
	findings               int
	findingsDigest         string
	calls, throttled       int
	retried                int // calls over a read's minimum, the collections' own retries
	// floor is the rate-limit floor of the sweep's calls (simProcess.floor), and
	// floorBucket the bucket that sets it.
	floor       time.Duration
	floorBucket string
	replicas    []replicaSweep
	// CPU of the sweep's window, by process; machine is every core's busy time.
	simCPU, pgCPU, machineCPU, selfCPU time.Duration
	simPeakKiB                         int64
	// lockWaits and active count, over the samples, the backends waiting on the store's
	// write lock (PostgreSQL's advisory lock) and the active ones.
	lockWaits, active, samples int
	// queries counts the active statements seen in the samples, by their first characters.
	queries map[string]int
	// faultyStatus is the stored status of each scope of a failing account.
	faultyStatus map[string]string
	// poles says when the IAM scopes (an unchanged sweep's longest reads) started and
	// how long they took, and which collection ended last (longPoles).
	poles string
}

// replicaSweep is one replica's part of one sweep.
type replicaSweep struct {
	id      string
	jobs    int           // jobs it ran the last attempt of
	cpu     time.Duration // in the sweep's window
	peakKiB int64         // VmHWM in the sweep's window
}

// sweepRunStats is each replica's whole life: its CPU from its rusage once it exited, its
// peak resident set as the largest of its start-up's and its sweeps' (resetting VmHWM
// resets the peak rusage reports too: the kernel keeps one high-water mark).
type sweepRunStats struct {
	run     string
	cpu     []time.Duration
	peakKiB []int64
}

// run starts the run's replicas on a fresh database, sweeps twice, stops them.
func (b *sweepBench) run(t *testing.T, sim *simProcess, want sweepWant, r sweepRun) ([]sweepResult, sweepRunStats) {
	name := fmt.Sprintf("%s ×%d", r.backend, r.replicas)
	dir := t.TempDir()
	dsn := filepath.Join(dir, "state", "warden.db")
	if r.backend == "postgres" {
		dsn = storetest.FreshSchema(t, b.pgBase)
	}
	cfg := filepath.Join(dir, "warden.yaml")
	config := "targets:\n  aws:\n    org: true\n    regions: [" + strings.Join(b.regions, ", ") + "]\n"
	if !b.paced {
		// Far above anything the run makes: the buckets never wait.
		config += "    rate_limits: {iam: 100000, sts: 100000, ec2: 100000, acm: 100000, organizations: 100000}\n"
	}
	config += "daemon:\n"
	if b.readers > 0 {
		config += fmt.Sprintf("  readers: %d\n", b.readers)
	}
	if v := os.Getenv("WARDEN_BENCH_SWEEP_MEMORY_LIMIT"); v != "" {
		config += fmt.Sprintf("  memory_limit: %q\n", v)
	}
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	const token = "sweep-bench-token-0123456789abcdef0123456789"
	// No --schedule: the sweep starts when every replica is up (POST /v1/reconcile), not
	// when the first one becomes the leader (RunOnStart) and before the others joined.
	level := "info"
	if os.Getenv("WARDEN_BENCH_SWEEP_LOGS") != "" {
		level = "debug"
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--db", dsn, "--config", cfg, "--dry-run", "--log-level", level}
	env := []string{"WARDEN_EVENTS_TOKEN=" + token, "XDG_CONFIG_HOME=" + dir, "XDG_STATE_HOME=" + dir}
	if b.procs > 0 {
		env = append(env, fmt.Sprintf("GOMAXPROCS=%d", b.procs))
	}
	var reps []*served
	var ids []string
	named := regexp.MustCompile(`reconciling as replica (\S+)`)
	for i := range r.replicas {
		args := args
		if dir := os.Getenv("WARDEN_BENCH_SWEEP_PROFILE"); dir != "" {
			// A CPU profile of each replica's whole life, written when it stops, and a
			// heap profile at its highest live heap.
			args = append(slices.Clone(args), "--cpuprofile", filepath.Join(dir, fmt.Sprintf("%s-x%d-%d.pprof", r.backend, r.replicas, i)),
				"--memprofile", filepath.Join(dir, fmt.Sprintf("%s-x%d-%d.heap.pprof", r.backend, r.replicas, i)))
		}
		s := startServeEnv(t, sim.url, args, env...)
		reps = append(reps, s)
		// Its queue is working once the daemon says it started, not when it listens.
		ids = append(ids, waitLong(t, "the replica's queue to start", time.Minute, func() (string, bool) {
			out := s.output()
			m := named.FindStringSubmatch(out)
			if m == nil {
				return "", false
			}
			return m[1], strings.Contains(out, "daemon started")
		}))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for i, s := range reps {
				t.Logf("replica %d (%s) said:\n%s", i, ids[i], tail(s.output(), 40))
			}
		}
		if dir := os.Getenv("WARDEN_BENCH_SWEEP_LOGS"); dir != "" {
			for i, s := range reps {
				name := filepath.Join(dir, fmt.Sprintf("%s-x%d-%d.log", r.backend, r.replicas, i))
				if err := os.WriteFile(name, []byte(s.output()), 0o600); err != nil {
					t.Error(err)
				}
			}
		}
	})
	db, dialect := storetest.RawDB(t, dsn)
	q := ""
	if dialect == "postgres" {
		q = riverTables(t, db)
	}
	pm := 0
	if dialect == "postgres" {
		pm = postmasterOf(t, db)
	}

	st := sweepRunStats{run: name}
	for _, s := range reps {
		st.peakKiB = append(st.peakKiB, peakOf(t, s.cmd.Process.Pid)) // start-up: the engine's compilation, River's migrations
	}
	var out []sweepResult
	var hashes map[string]string
	sweeps := 2 + b.unchanged
	if b.drift > 0 {
		sweeps++
	}
	for sweep := 1; sweep <= sweeps; sweep++ {
		if sweep >= 2 {
			hashes = resourceHashes(t, db, want)
		}
		drifted := b.drift > 0 && sweep == sweeps
		if drifted {
			resp, err := http.Post(sim.url+"/_sim/drift", "text/plain", strings.NewReader(strconv.FormatFloat(b.drift, 'g', -1, 64)))
			if err != nil {
				t.Fatal(err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("POST /_sim/drift: %s", resp.Status)
			}
		}
		res := b.sweep(t, sim, want, db, dialect, q, pm, reps, ids, token)
		res.run, res.sweep, res.drifted = name, sweep, drifted
		if sweep == 1 && os.Getenv("WARDEN_BENCH_SWEEP_PROFILE") != "" {
			// The sweeps after the first into profiles of their own (FILE.1): SIGUSR1
			// ends each process's profile so far and starts the next.
			for _, p := range append([]*exec.Cmd{sim.cmd}, cmdsOf(reps)...) {
				if err := p.Process.Signal(syscall.SIGUSR1); err != nil {
					t.Fatal(err)
				}
			}
		}
		if sweep == 1 && res.evaluated != res.resources {
			t.Errorf("%s: the first sweep evaluated %d of %d resources, want every one", name, res.evaluated, res.resources)
		}
		if sweep >= 2 {
			// Nothing changed in the world (in sweep 3, nothing but the drift) but what
			// the sweeps did to it themselves: a replica's first AssumeRole into an
			// account marks the role used (its RoleLastUsed moves), so with several
			// replicas a few roles read anew. Only those may be evaluated again. A resource is also evaluated again when its
			// last evaluation failed (stored without a hash).
			now := resourceHashes(t, db, want)
			var changed, errored []string
			for key, hash := range now {
				switch {
				case hash == "":
					errored = append(errored, key)
				case hashes[key] != hash:
					changed = append(changed, key)
				}
			}
			slices.Sort(changed)
			slices.Sort(errored)
			if len(changed) > 0 {
				t.Logf("%s: read anew in the second sweep: %v", name, changed)
			}
			if res.evaluated != len(changed) {
				t.Errorf("%s: the second sweep evaluated %d resources, want the %d read anew; %d failed to evaluate %v; %d resources read, %d stored",
					name, res.evaluated, len(changed), len(errored), errored[:min(len(errored), 5)], res.resources, len(now))
			}
		}
		if sweep == 2 && res.findingsDigest != out[0].findingsDigest {
			t.Errorf("%s: the second sweep, nothing changed, left %d findings (%s), the first %d (%s)", name,
				res.findings, res.findingsDigest[:12], out[0].findings, out[0].findingsDigest[:12])
		}
		t.Logf("%s sweep %d: %d collections in %v (%.1f jobs/s), %d fixes (dry run), sweep → last job %v; %d resources, %d evaluated, %d findings; jobs by replica %v",
			name, sweep, res.collects, res.collectWall.Round(time.Millisecond), float64(res.collects)/res.collectWall.Seconds(), res.fixes,
			res.sweepWall.Round(time.Millisecond), res.resources, res.evaluated, res.findings, res.replicas)
		for i, x := range res.replicas {
			st.peakKiB[i] = max(st.peakKiB[i], x.peakKiB)
		}
		out = append(out, res)
	}
	for i, s := range reps {
		s.stop(t)
		ru := s.cmd.ProcessState.SysUsage().(*syscall.Rusage)
		st.cpu = append(st.cpu, time.Duration(syscall.TimevalToNsec(ru.Utime)+syscall.TimevalToNsec(ru.Stime)))
		st.peakKiB[i] = max(st.peakKiB[i], ru.Maxrss) // KiB on Linux: the shutdown's peak
	}
	return out, st
}

// sweep starts one sweep of the organisation through POST /v1/reconcile, waits until
// every scope has been read and every job it caused has finished, checks that each scope
// was read once, and measures it.
func (b *sweepBench) sweep(t *testing.T, sim *simProcess, want sweepWant, db *sql.DB, dialect, q string, pm int,
	reps []*served, ids []string, token string) sweepResult {
	t.Helper()
	var after int64
	if err := db.QueryRow(`SELECT COALESCE(MAX(id), 0) FROM ` + q + `river_job`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	sim.resetCalls(t)
	pids := []int{sim.cmd.Process.Pid}
	for _, s := range reps {
		pids = append(pids, s.cmd.Process.Pid)
	}
	for _, pid := range pids {
		resetPeak(t, pid)
	}
	cpu0 := map[int]time.Duration{}
	for _, pid := range pids {
		cpu0[pid] = cpuOf(t, pid, false)
	}
	pg0 := pgCPU(t, pm)
	busy0 := machineBusy(t)
	self0 := selfCPU()
	begun := time.Now()

	sweepNow(t, reps[0].url, token)

	var res sweepResult
	timeout := 45 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = time.Until(d) - time.Minute
	}
	// Polled once a second: the times come from the queue's table, not from the poll. Each
	// count reads an index of River's (kind; state, queue, …, id), not the jobs' rows,
	// whose arguments (a fix's plan) are large: on SQLite, in the test's own process,
	// reading them every poll cost a fifth of a core.
	count := func(where string) int {
		var n int
		if err := db.QueryRow(fmt.Sprintf(`SELECT COUNT(*) FROM %sriver_job WHERE %s AND id > %d`, q, where, after)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	res.queries = map[string]int{}
	res.faultyStatus = map[string]string{}
	waitLongEvery(t, "the sweep to read every scope and finish its jobs", timeout, time.Second, func() (string, bool) {
		if dialect == "postgres" {
			// What the server is busy with: the active statements, by their start, and
			// the backends waiting on the store's write lock.
			rows, err := db.Query(`SELECT COALESCE(wait_event_type = 'Lock' AND wait_event = 'advisory', false), left(regexp_replace(query, '\s+', ' ', 'g'), 72)
				FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'`)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var waiting bool
				var query string
				if err := rows.Scan(&waiting, &query); err != nil {
					t.Fatal(err)
				}
				res.active++
				if waiting {
					res.lockWaits++
				}
				res.queries[query]++
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			res.samples++
		}
		swept := count(fmt.Sprintf(`kind = '%s' AND state = 'completed'`, daemon.KindSweep))
		collects := count(fmt.Sprintf(`kind = '%s'`, daemon.KindCollect))
		unfinished := count(`state IN ('available', 'pending', 'running', 'retryable', 'scheduled')`)
		progress := fmt.Sprintf("sweep done %d, %d of %d collections queued, %d jobs unfinished", swept, collects, len(want.scopes), unfinished)
		if len(want.faulty) == 0 {
			return progress, swept > 0 && collects >= len(want.scopes) && unfinished == 0
		}
		// Failing accounts: the sweep is the healthy accounts' collections and every
		// job they caused; the failing ones' collections may still be retried, or not
		// be asked for again while a retry waits.
		waiting, done := 0, map[string]bool{}
		for _, j := range sweepJobs(t, db, dialect, q, after) {
			switch {
			case j.kind == daemon.KindCollect && !want.healthy(j.scope):
			case j.state != "completed":
				waiting++
			case j.kind == daemon.KindCollect:
				done[j.scope] = true
			}
		}
		return fmt.Sprintf("%s; healthy: %d of %d collections done, %d jobs unfinished", progress, len(done), want.healthyScopes(), waiting),
			swept > 0 && len(done) == want.healthyScopes() && waiting == 0
	})

	// The window closes here: the processes' CPU and peaks are the sweep's.
	for i, s := range reps {
		res.replicas = append(res.replicas, replicaSweep{id: ids[i], cpu: cpuOf(t, s.cmd.Process.Pid, false) - cpu0[s.cmd.Process.Pid],
			peakKiB: peakOf(t, s.cmd.Process.Pid)})
	}
	res.simCPU, res.simPeakKiB = cpuOf(t, sim.cmd.Process.Pid, false)-cpu0[sim.cmd.Process.Pid], peakOf(t, sim.cmd.Process.Pid)
	res.pgCPU = pgCPU(t, pm) - pg0
	res.machineCPU = machineBusy(t) - busy0
	res.selfCPU = selfCPU() - self0

	// The queue: one sweep, one collection of each scope, in one attempt, each finished.
	jobs := sweepJobs(t, db, dialect, q, after)
	var sweepStart, firstCollect, lastCollect, lastJob time.Time
	var collections []sweepJob
	collected := map[string]int{}
	correlation := ""
	faultyStates := map[string]int{}
	for _, j := range jobs {
		if j.kind == daemon.KindCollect && !want.healthy(j.scope) {
			faultyStates[j.state]++
			continue
		}
		if j.state != "completed" {
			t.Errorf("%s job %d (%s) is %s", j.kind, j.id, j.scope, j.state)
		}
		if j.attempt != 1 {
			t.Errorf("%s job %d (%s) took %d attempts (%v)", j.kind, j.id, j.scope, j.attempt, j.attemptedBy)
		}
		if len(j.attemptedBy) > 0 {
			if i := slices.Index(ids, j.attemptedBy[len(j.attemptedBy)-1]); i >= 0 {
				res.replicas[i].jobs++
			}
		}
		if j.finalizedAt.After(lastJob) {
			lastJob = j.finalizedAt
		}
		switch j.kind {
		case daemon.KindSweep:
			sweepStart, correlation = j.attemptedAt, j.correlation
		case daemon.KindCollect:
			collected[j.scope]++
			collections = append(collections, j)
			res.collects++
			if firstCollect.IsZero() || j.attemptedAt.Before(firstCollect) {
				firstCollect = j.attemptedAt
			}
			if j.finalizedAt.After(lastCollect) {
				lastCollect = j.finalizedAt
			}
		case daemon.KindRemediate:
			res.fixes++
		}
	}
	res.collectWall, res.sweepWall = lastCollect.Sub(firstCollect), lastJob.Sub(sweepStart)
	res.poles = longPoles(collections, sweepStart)
	healthy := 0
	for _, sc := range want.scopes {
		if !want.healthy(sc) {
			continue
		}
		healthy++
		if collected[sc] != 1 {
			t.Errorf("scope %s collected %d times in the sweep, want once", sc, collected[sc])
		}
	}
	if len(collected) != healthy {
		t.Errorf("the sweep collected %d scopes of healthy accounts, the world has %d", len(collected), healthy)
	}
	if len(want.faulty) > 0 {
		t.Logf("the failing accounts' collections, by state: %v", faultyStates)
	}

	// The store: every scope read in this sweep, in full.
	rows, err := db.Query(`SELECT scope, status, resources, read_at FROM scope_state`)
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	for rows.Next() {
		var scope, status, readAt string
		var n int
		if err := rows.Scan(&scope, &status, &n, &readAt); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, readAt)
		if err != nil {
			t.Fatal(err)
		}
		if !want.healthy(scope) {
			// A denied account's scopes never read as clean; a throttled or failing one's
			// may have been read in full through the collector's retries.
			res.faultyStatus[scope] = status
			if want.faulty[strings.SplitN(scope, "/", 3)[1]] == "denied" && status == "ok" {
				t.Errorf("scope %s of a denied account reads as ok", scope)
			}
			continue
		}
		if status != "ok" || at.Before(begun.Add(-time.Second)) {
			t.Errorf("scope %s: %s, read at %v (the sweep began at %v)", scope, status, at, begun)
		}
		read++
		res.resources += n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	if read != healthy {
		t.Errorf("scope_state holds %d scopes of healthy accounts, want %d", read, healthy)
	}
	if len(want.faulty) > 0 {
		byStatus := map[string]int{}
		for sc, st := range res.faultyStatus {
			byStatus[want.faulty[strings.SplitN(sc, "/", 3)[1]]+" "+st]++
		}
		t.Logf("%d failing accounts of %d; their scopes by fault and stored status: %v", len(want.faulty), len(want.accounts), byStatus)
	}
	res.findings, res.findingsDigest = findingsDigest(t, db, want)

	// The replicas' logs: what each collection evaluated, and the calls (attempts,
	// retries included) it says it made.
	line := regexp.MustCompile(`msg="scope reconciled" correlation=(\S+) scope=(\S+) .*? evaluated=(\d+) .*? calls=(\d+)`)
	reported := map[string]int{}
	for _, s := range reps {
		for _, m := range line.FindAllStringSubmatch(s.output(), -1) {
			if m[1] == correlation && want.healthy(m[2]) {
				n, _ := strconv.Atoi(m[3])
				c, _ := strconv.Atoi(m[4])
				res.evaluated += n
				reported[m[2]] += c
			}
		}
	}

	// The simulator: nothing was written, and each scope was read once: its one-call
	// reads (the account summary, the certificate list) were served once, the security
	// groups in as many calls as they have pages, and the scope's calls, all told, are
	// the ones its one collection says it made. A call the SDK retried is counted by both;
	// it shows as a call over the minimum, reported, not an error.
	calls := sim.settledCalls(t)
	res.floor, res.floorBucket = sim.floor()
	for k, c := range calls {
		res.calls += c.Calls
		res.throttled += c.Throttled
		if c.Write && c.Calls > 0 {
			t.Errorf("the dry run wrote: %s ×%d", k, c.Calls)
		}
	}
	served := sim.byScope()
	for _, sc := range want.scopes {
		if want.healthy(sc) && served[sc] != reported[sc] {
			t.Errorf("scope %s: the simulator served %d calls, its collection says it made %d", sc, served[sc], reported[sc])
		}
	}
	for _, a := range want.accounts {
		if want.faulty[a] != "" {
			continue
		}
		// Once answered: a throttled call the SDK retried was served twice, answered once.
		if n := sim.answered("iam:GetAccountSummary", a, "global"); n != 1 {
			t.Errorf("account %s: IAM read %d times (GetAccountSummary, %d calls), want once", a, n, sim.count("iam:GetAccountSummary", a, "global"))
		}
		for _, r := range b.regions {
			if n := sim.answered("acm:ListCertificates", a, r); n != 1 {
				t.Errorf("%s/%s: certificates listed %d times (%d calls), want once", a, r, n, sim.count("acm:ListCertificates", a, r))
			}
			n, pages := sim.count("ec2:DescribeSecurityGroups", a, r), want.sgPages[a+" "+r]
			switch {
			case n < pages:
				t.Errorf("%s/%s: security groups described in %d calls, want %d pages", a, r, n, pages)
			case n > pages:
				res.retried += n - pages
				t.Logf("%s/%s: security groups described in %d calls for %d pages (the collection counts %d calls: retried)", a, r, n, pages, reported["aws/"+a+"/ec2/"+r])
			}
		}
	}
	return res
}

// sweepJob is a row of River's job table, as far as the benchmark reads it.
type sweepJob struct {
	id                       int64
	kind, state              string
	attempt                  int
	attemptedBy              []string
	scope, correlation       string
	attemptedAt, finalizedAt time.Time
}

// sweepJobs are the jobs after the id, in either database's dialect of River's table.
func sweepJobs(t *testing.T, db *sql.DB, dialect, q string, after int64) []sweepJob {
	t.Helper()
	query := `SELECT id, kind, state, attempt, COALESCE(array_to_string(attempted_by, ' '), ''),
		COALESCE(args->>'scope', ''), COALESCE(args->>'correlation', ''), attempted_at, finalized_at
		FROM ` + q + `river_job WHERE id > $1 ORDER BY id`
	if dialect == "sqlite" {
		query = `SELECT id, kind, state, attempt, COALESCE((SELECT group_concat(value, ' ') FROM json_each(river_job.attempted_by)), ''),
			COALESCE(json_extract(args, '$.scope'), ''), COALESCE(json_extract(args, '$.correlation'), ''), attempted_at, finalized_at
			FROM river_job WHERE id > ? ORDER BY id`
	}
	rows, err := db.Query(query, after)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []sweepJob
	for rows.Next() {
		var j sweepJob
		var by string
		var at, fin sql.NullTime
		if err := rows.Scan(&j.id, &j.kind, &j.state, &j.attempt, &by, &j.scope, &j.correlation, &at, &fin); err != nil {
			t.Fatal(err)
		}
		j.attemptedBy, j.attemptedAt, j.finalizedAt = strings.Fields(by), at.Time, fin.Time
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// resourceHashes are the stored hash of every resource, by scope and uid.
func resourceHashes(t *testing.T, db *sql.DB, want sweepWant) map[string]string {
	t.Helper()
	rows, err := db.Query(`SELECT uid, scope, hash FROM resource_state`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var uid, scope, h string
		if err := rows.Scan(&uid, &scope, &h); err != nil {
			t.Fatal(err)
		}
		if want.healthy(scope) {
			out[scope+" "+uid] = h
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// findingsDigest counts the healthy accounts' findings not resolved and hashes their
// fingerprints (and fails the test on a failing account's resolved finding), so that
// two runs are compared finding by finding.
func findingsDigest(t *testing.T, db *sql.DB, want sweepWant) (int, string) {
	t.Helper()
	rows, err := db.Query(`SELECT fingerprint, scope, status FROM finding_state ORDER BY fingerprint`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	h := sha256.New()
	n := 0
	for rows.Next() {
		var fp, scope, status string
		if err := rows.Scan(&fp, &scope, &status); err != nil {
			t.Fatal(err)
		}
		if !want.healthy(scope) {
			// A failing account's finding may go unknown, never resolved: its reads
			// failed, it did not get better.
			if status == "resolved" {
				t.Errorf("finding %s of %s, an account whose calls fail, was resolved", fp, scope)
			}
			continue
		}
		if status == "resolved" {
			continue
		}
		fmt.Fprintf(h, "%s %s\n", fp, status)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return n, hex.EncodeToString(h.Sum(nil))
}

// sweepTable is the results as Markdown, for BENCHMARKS.md.
func sweepTable(rs []sweepResult, runs []sweepRunStats, b *sweepBench) string {
	var s strings.Builder
	pacing := "no added latency, no throttling, warden's buckets raised out of the way"
	if b.paced {
		pacing = fmt.Sprintf("%v a call, warden's default rate limits, the simulator throttling at twice them", b.latency)
	}
	fmt.Fprintf(&s, "%d accounts, %d scopes, pacing: %s\n\n", b.accounts, b.accounts*(1+2*len(b.regions)), pacing)
	s.WriteString("| run | sweep | collections | wall (first collection → last) | jobs/s | fixes (dry run) | sweep → last job | resources | evaluated | findings | jobs per replica | CPU: replicas / sim / PostgreSQL / whole machine | peak RSS per replica | sim peak |\n")
	s.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|\n")
	for _, r := range rs {
		var jobs, cpus, peaks []string
		var replicas time.Duration
		for _, x := range r.replicas {
			jobs = append(jobs, strconv.Itoa(x.jobs))
			cpus = append(cpus, secs(x.cpu))
			peaks = append(peaks, strconv.FormatInt(x.peakKiB>>10, 10))
			replicas += x.cpu
		}
		sweep := "1 (all new)"
		switch {
		case r.drifted:
			sweep = fmt.Sprintf("%d (%g%% drifted)", r.sweep, b.drift*100)
		case r.sweep >= 2:
			sweep = fmt.Sprintf("%d (unchanged)", r.sweep)
		}
		pg := "—"
		if r.pgCPU > 0 {
			pg = secs(r.pgCPU)
		}
		fmt.Fprintf(&s, "| %s | %s | %d | %s | %.1f | %d | %s | %d | %d | %d | %s | %s (%s) / %s / %s / %s | %s MiB | %d MiB |\n",
			r.run, sweep, r.collects, secs(r.collectWall), float64(r.collects)/r.collectWall.Seconds(), r.fixes, secs(r.sweepWall),
			r.resources, r.evaluated, r.findings, strings.Join(jobs, " + "), secs(replicas), strings.Join(cpus, " + "),
			secs(r.simCPU), pg, secs(r.machineCPU), strings.Join(peaks, " / "), r.simPeakKiB>>10)
	}
	s.WriteString("\nThe simulator's peak in the first run's first sweep includes what its world's load left in its heap, not yet returned to the system.\n")
	s.WriteString("\nWhole life of each replica (start-up, both sweeps, shutdown):\n\n")
	for _, r := range runs {
		var parts []string
		for i := range r.cpu {
			parts = append(parts, fmt.Sprintf("%s CPU, max RSS %d MiB", secs(r.cpu[i]), r.peakKiB[i]>>10))
		}
		fmt.Fprintf(&s, "- %s: %s\n", r.run, strings.Join(parts, "; "))
	}
	for _, r := range rs {
		if r.samples > 0 {
			type seen struct {
				query string
				n     int
			}
			var top []seen
			for q, n := range r.queries {
				top = append(top, seen{q, n})
			}
			slices.SortFunc(top, func(a, b seen) int { return b.n - a.n })
			var parts []string
			for _, x := range top[:min(len(top), 4)] {
				parts = append(parts, fmt.Sprintf("%.2f `%s`", float64(x.n)/float64(r.samples), x.query))
			}
			fmt.Fprintf(&s, "- %s sweep %d: PostgreSQL backends active %.2f on average, %.2f waiting on the store's write lock (%d samples); most seen: %s\n",
				r.run, r.sweep, float64(r.active)/float64(r.samples), float64(r.lockWaits)/float64(r.samples), r.samples, strings.Join(parts, ", "))
		}
		fmt.Fprintf(&s, "- %s sweep %d: %d simulator calls (%d throttled, %d retried by the collector); the test's own CPU %s\n",
			r.run, r.sweep, r.calls, r.throttled, r.retried, secs(r.selfCPU))
		if b.paced {
			fmt.Fprintf(&s, "  rate-limit floor of its calls %s (%s); collections took %.2f× the floor, the sweep to its last job %.2f×\n",
				secs(r.floor), r.floorBucket, r.collectWall.Seconds()/r.floor.Seconds(), r.sweepWall.Seconds()/r.floor.Seconds())
		}
		if r.poles != "" {
			fmt.Fprintf(&s, "  %s\n", r.poles)
		}
	}
	return s.String()
}

// longPoles says when the sweep's IAM scopes started after the sweep job did and how
// long they took (p50, p95, max), and which collection ended last: whether an unchanged
// sweep's tail is its longest reads starting late or taking longer than their calls.
func longPoles(collections []sweepJob, sweepStart time.Time) string {
	var starts, took []time.Duration
	var last sweepJob
	for _, j := range collections {
		if j.finalizedAt.After(last.finalizedAt) {
			last = j
		}
		if strings.HasSuffix(j.scope, "/iam") {
			starts = append(starts, j.attemptedAt.Sub(sweepStart))
			took = append(took, j.finalizedAt.Sub(j.attemptedAt))
		}
	}
	if len(starts) == 0 {
		return ""
	}
	q := func(ds []time.Duration) string {
		slices.Sort(ds)
		at := func(p float64) string { return secs2(ds[min(len(ds)-1, int(p*float64(len(ds))))]) }
		return fmt.Sprintf("p50 %s, p95 %s, max %s", at(0.5), at(0.95), secs2(ds[len(ds)-1]))
	}
	return fmt.Sprintf("%d IAM scopes started after the sweep job (%s) and took (%s); the last collection to end: %s, started %s after the sweep job, took %s",
		len(starts), q(starts), q(took), last.scope, secs2(last.attemptedAt.Sub(sweepStart)), secs2(last.finalizedAt.Sub(last.attemptedAt)))
}

// secs2 is secs to the hundredth.
func secs2(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

func (r replicaSweep) String() string { return fmt.Sprintf("%s:%d", r.id, r.jobs) }

// cmdsOf are the replicas' processes.
func cmdsOf(reps []*served) []*exec.Cmd {
	out := make([]*exec.Cmd, len(reps))
	for i, r := range reps {
		out[i] = r.cmd
	}
	return out
}
