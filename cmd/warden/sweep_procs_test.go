package main

// The processes of the sweep benchmark (sweep_bench_test.go): the simulator it sweeps,
// and what the benchmark reads of each process (CPU, peak memory) from /proc.

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/cloudsim"
)

// simProcess is `warden sim` serving the benchmark's world, and the calls it served, by
// operation, account and region (GET /_sim/calls/places), as of the last settledCalls.
type simProcess struct {
	cmd   *exec.Cmd
	url   string
	ready time.Duration
	done  chan struct{}

	mu sync.Mutex
	n  map[string]int // "service:Action account region" → calls served or refused
	ok map[string]int // the same, answered without a fault
}

// startSimProcess starts `warden sim --world file` on a free loopback port and checks
// that it serves the world's accounts.
func startSimProcess(t *testing.T, world string, accounts int) *simProcess {
	t.Helper()
	// The simulator counts the calls by place itself: a debug line for each call, parsed
	// here, took a tenth of an unchanged sweep's CPU from the machine (the simulator's
	// and the test's), which the replicas share.
	args := []string{"sim", "--world", world, "--listen", "127.0.0.1:0"}
	if dir := os.Getenv("WARDEN_BENCH_SWEEP_PROFILE"); dir != "" {
		// The simulator's CPU profile too: it shares the machine's cores with the replicas.
		args = append(args, "--cpuprofile", filepath.Join(dir, "sim.pprof"))
	}
	s := &simProcess{cmd: wardenChild("", args...),
		done: make(chan struct{}), n: map[string]int{}, ok: map[string]int{}}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	var other bytes.Buffer // what it said, for a failure
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.mu.Lock()
			other.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
		}
		_ = s.cmd.Wait()
		close(s.done)
	}()
	serving := make(chan []string, 1)
	go func() {
		re := regexp.MustCompile(`(\d+) AWS accounts, \d+ GCP projects, serving on (http://\S+)`)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				serving <- m
			}
		}
	}()
	select {
	case m := <-serving:
		if m[1] != strconv.Itoa(accounts) {
			t.Fatalf("warden sim serves %s accounts, the world file was written with %d", m[1], accounts)
		}
		s.url = m[2]
	case <-s.done:
		t.Fatalf("warden sim exited: %v\n%s", s.cmd.ProcessState, other.String())
	case <-time.After(10 * time.Minute):
		t.Fatal("warden sim did not serve its world within 10 minutes")
	}
	s.ready = time.Since(started)
	return s
}

// resetCalls zeroes the simulator's counters and the test's.
func (s *simProcess) resetCalls(t *testing.T) {
	t.Helper()
	resp, err := http.Post(s.url+"/_sim/calls/reset", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.n)
	clear(s.ok)
}

// settledCalls are the simulator's counters, by operation, once every call they count
// was served (a call is counted as it arrives, and by place once its latency is over);
// the counters by place are kept for count, answered, byScope and floor.
func (s *simProcess) settledCalls(t *testing.T) map[string]cloudsim.CallStats {
	t.Helper()
	get := func(path string, v any) {
		resp, err := http.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return waitLong(t, "the simulator's calls to be served", 30*time.Second, func() (map[string]cloudsim.CallStats, bool) {
		var calls map[string]cloudsim.CallStats
		var places map[string]cloudsim.PlaceCalls
		get("/_sim/calls", &calls)
		get("/_sim/calls/places", &places)
		served, placed := 0, 0
		for _, c := range calls {
			served += c.Calls - c.Cancelled
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		clear(s.n)
		clear(s.ok)
		for k, p := range places {
			s.n[k], s.ok[k] = p.Calls, p.Answered
			placed += p.Calls
		}
		return calls, served == placed
	})
}

// byScope counts the calls served by the scope they belong to: aws/ACCOUNT/iam for IAM,
// aws/ACCOUNT/ec2/REGION and aws/ACCOUNT/acm/REGION; STS and Organizations belong to none.
func (s *simProcess) byScope() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, n := range s.n {
		f := strings.Fields(k) // service:Action account region
		if len(f) != 3 {
			continue
		}
		service, _, _ := strings.Cut(f[0], ":")
		switch service {
		case "iam":
			out["aws/"+f[1]+"/iam"] += n
		case "ec2", "acm":
			out["aws/"+f[1]+"/"+service+"/"+f[2]] += n
		}
	}
	return out
}

// count is how many op calls the simulator served in account and region ("global" for
// IAM and STS).
func (s *simProcess) count(op, account, region string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[op+" "+account+" "+region]
}

// answered is how many op calls the simulator answered in account and region without
// a fault (throttling, a 5xx): the ones the collection could use.
func (s *simProcess) answered(op, account, region string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ok[op+" "+account+" "+region]
}

// simStats is the simulator's CPU over its whole life.
type simStats struct {
	cpu time.Duration
}

// stop sends SIGTERM and returns the simulator's CPU, from its rusage.
func (s *simProcess) stop(t *testing.T) simStats {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("warden sim did not stop within 30 s of SIGTERM")
	}
	ru := s.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	return simStats{cpu: time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))}
}

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on every Linux architecture
// Go runs on (the kernel converts for user space whatever its own HZ).
const clockTick = 10 * time.Millisecond

// procStat reads the fields of /proc/PID/stat after the command name (which may hold
// spaces and parentheses): [0] is the state, [1] the parent, [11] and [12] the user and
// system time, [13] and [14] those of the children waited for.
func procStat(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 15 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return f, nil
}

func ticks(f []string, i ...int) time.Duration {
	var n int64
	for _, k := range i {
		v, _ := strconv.ParseInt(f[k], 10, 64)
		n += v
	}
	return time.Duration(n) * clockTick
}

// cpuOf is the CPU time, user and system, process pid has used so far; with children,
// that of its children it has waited for too.
func cpuOf(t *testing.T, pid int, children bool) time.Duration {
	t.Helper()
	f, err := procStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	if children {
		return ticks(f, 11, 12, 13, 14)
	}
	return ticks(f, 11, 12)
}

// postmasterOf is the PID of the PostgreSQL server's postmaster when it runs on this
// machine (the parent of the backend serving db), else 0.
func postmasterOf(t *testing.T, db *sql.DB) int {
	t.Helper()
	var backend int
	if err := db.QueryRow(`SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		t.Fatal(err)
	}
	f, err := procStat(backend)
	if err != nil {
		t.Logf("PostgreSQL's backend %d is not on this machine (%v): its CPU is not measured", backend, err)
		return 0
	}
	pm, _ := strconv.Atoi(f[1])
	return pm
}

// pgCPU is every CPU second the PostgreSQL server has used: the postmaster's own, its
// exited children's (it reaps its backends) and its live children's. Other clients of the
// server count too: the benchmark's share is the delta over a sweep on an idle server.
func pgCPU(t *testing.T, pm int) time.Duration {
	t.Helper()
	if pm == 0 {
		return 0
	}
	total := cpuOf(t, pm, true)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := procStat(pid)
		if err != nil || f[1] != strconv.Itoa(pm) {
			continue // gone meanwhile, or not a backend
		}
		total += ticks(f, 11, 12)
	}
	return total
}

// machineBusy is the CPU time every core of the machine has spent not idle, from
// /proc/stat: what else ran beside the benchmark shows as the difference.
func machineBusy(t *testing.T) time.Duration {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("/proc/stat: %q", line)
	}
	return ticks(f, 1, 2, 3, 6, 7, 8)
}

// selfCPU is the test process's own CPU time (its polling of the database).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

// resetPeak resets the process's peak resident set (VmHWM) to its current one, so that
// the next peakOf is the peak of what came after: of the sweep, not of the start-up (the
// simulator's world load, the engine's compilation).
func resetPeak(t *testing.T, pid int) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS of %d (the sweep's peak includes what came before): %v", pid, err)
	}
}

// peakOf is the process's peak resident set since its last resetPeak, in KiB.
func peakOf(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("/proc/%d/status: %q", pid, l)
			}
			return n
		}
	}
	t.Fatalf("/proc/%d/status has no VmHWM", pid)
	return 0
}

// waitLongEvery polls f every interval until it reports done, for at most timeout.
func waitLongEvery[T any](t *testing.T, what string, timeout, interval time.Duration, f func() (T, bool)) T {
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
		time.Sleep(interval)
	}
}

// floor is the rate-limit floor of the calls counted since the last reset: the time the
// busiest of warden's token buckets (one per service and account, awsapi.DefaultRateLimit
// calls a second, a burst of one) needs to let its calls through, as if every bucket had
// started at the sweep's first moment and nothing else took any time. It also names that
// bucket and its calls. A sweep cannot finish sooner, whatever its concurrency.
func (s *simProcess) floor() (time.Duration, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buckets := map[string]int{}
	for k, n := range s.n {
		f := strings.Fields(k) // service:Action account region
		if len(f) != 3 {
			continue
		}
		service, _, _ := strings.Cut(f[0], ":")
		buckets[service+" "+f[1]] += n
	}
	var worst time.Duration
	var which string
	for b, n := range buckets {
		service, _, _ := strings.Cut(b, " ")
		// A burst of one: the first call passes at once, each other waits its turn.
		d := time.Duration(float64(n-1) / awsapi.DefaultRateLimit(service) * float64(time.Second))
		if d > worst || (d == worst && b < which) {
			worst, which = d, fmt.Sprintf("%s: %d calls", b, n)
		}
	}
	return worst, which
}
