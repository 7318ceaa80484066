package engine_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/snapshot"
)

// runaway never ends: 10^15 steps over a list computed once, with little memory.
var runaway = strings.Replace(userPolicy("ACME-SLOW", "acme.slow", "some i in r\n\tsome j in r\n\tsome k in r\n\ti + j + k < 0"),
	"deny contains", "r := numbers.range(1, 100000)\n\ndeny contains", 1)

// hog allocates without bound: a comprehension over a range of 10^9 numbers.
var hog = userPolicy("ACME-HOG", "acme.hog", "count([x | some x in numbers.range(1, 1000000000)]) < 0")

func sgs(n int) []snapshot.Resource {
	out := make([]snapshot.Resource, n)
	for i := range out {
		out[i] = sg(fmt.Sprintf("sg-%02d", i), 22)
	}
	return out
}

func TestEvaluate_runawayPolicyBecomesAnEvalErrorAtItsDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy, "slow.rego": runaway})},
		EvalTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := e.Evaluate(ctx, snapshot.Header{}, time.Now(), sgs(20))
	if err != nil {
		t.Fatal(err)
	}
	// After a few deadlines the policy is no longer run: 20 resources must not cost 20 deadlines.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("20 resources took %s with a 200ms deadline", d)
	}
	if len(res.Findings) != 20 {
		t.Errorf("%d findings, want the healthy policy's 20", len(res.Findings))
	}
	if len(res.EvalErrors) != 20 {
		t.Fatalf("%d eval errors, want one per resource: %+v", len(res.EvalErrors), res.EvalErrors)
	}
	for i, ee := range res.EvalErrors {
		if ee.Policy != "ACME-SLOW" || !strings.Contains(ee.Error, "200ms") {
			t.Errorf("eval error %d = %+v, want ACME-SLOW and its 200ms deadline", i, ee)
		}
	}
}

func TestScan_runawayPolicyBecomesAnEvalErrorAtItsDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy, "slow.rego": runaway})},
		EvalTimeout: 200 * time.Millisecond, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	snap := `{"version":1,"resources":[
{"uid":"sg-1","type":"aws.ec2.security_group","name":"sg-1","account":"111111111111","region":"eu-west-1","attributes":{"group_id":"sg-1","ingress":[{"id":"sg-1#22","protocol":"tcp","cidr":"0.0.0.0/0","from_port":22,"to_port":22}],"egress":[]}}]}`
	res, err := e.Scan(ctx, snapshot.NewReader(strings.NewReader(snap), "s.json"), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 || len(res.EvalErrors) != 1 || res.EvalErrors[0].Policy != "ACME-SLOW" {
		t.Errorf("findings %+v, eval errors %+v: want the healthy finding and ACME-SLOW's error", res.Findings, res.EvalErrors)
	}
}

func TestEvaluate_memoryGuardAbortsTheHungriestEvaluation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The limit sits 128 MiB above today's heap, whatever the earlier tests left.
	runtime.GC()
	heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(heap)
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy, "hog.rego": hog})},
		EvalTimeout: time.Minute, MemoryLimit: int64(heap[0].Value.Uint64()) + 128<<20})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Evaluate(ctx, snapshot.Header{}, time.Now(), sgs(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Findings) != 1 {
		t.Errorf("findings %+v, want the healthy policy's", res.Findings)
	}
	if len(res.EvalErrors) != 1 || res.EvalErrors[0].Policy != "ACME-HOG" || !strings.Contains(res.EvalErrors[0].Error, "memory limit") {
		t.Errorf("eval errors %+v, want ACME-HOG's memory limit", res.EvalErrors)
	}
}

// A cancelled scan returns its context's error, never a result that looks complete.
func TestScan_cancelledDuringEvaluationReturnsTheContextError(t *testing.T) {
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy, "slow.rego": runaway})},
		EvalTimeout: -1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	snap := `{"version":1,"resources":[
{"uid":"sg-1","type":"aws.ec2.security_group","name":"sg-1","account":"111111111111","region":"eu-west-1","attributes":{"group_id":"sg-1","ingress":[],"egress":[]}}]}`
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		start := time.Now()
		res, err := e.Scan(ctx, snapshot.NewReader(strings.NewReader(snap), "s.json"), engine.Options{})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || res != nil {
			t.Fatalf("Scan = %v, %v; want no result and context.DeadlineExceeded", res, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the cancelled scan took %s to return", d)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
		res, err = e.Evaluate(ctx, snapshot.Header{}, time.Now(), sgs(1))
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || res != nil {
			t.Fatalf("Evaluate = %v, %v; want no result and context.DeadlineExceeded", res, err)
		}
	}
}
