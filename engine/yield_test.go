package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/snapshot"
)

// TestEvaluate_yieldsToUrgentWork evaluates 200 resources under a sweep's context while
// urgent work runs. Evaluate must wait at a yield until the urgent work ends; under the
// urgent work's own context it must not wait; and a sweep's evaluation that is waiting
// ends with its context.
func TestEvaluate_yieldsToUrgentWork(t *testing.T) {
	ctx := context.Background()
	e, err := engine.New(ctx, engine.Config{Sources: []engine.Source{policyFS(map[string]string{"ssh.rego": sshPolicy})}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var rs []snapshot.Resource
	for i := range 200 {
		rs = append(rs, sg(fmt.Sprintf("sg-%d", i), 22))
	}
	g := urgency.NewGate(time.Minute) // longer than the test: the wait ends with the work
	leave := g.Enter()
	done := make(chan error, 1)
	go func() {
		res, err := e.Evaluate(urgency.WithGate(ctx, g), snapshot.Header{}, now, rs)
		if err == nil && len(res.Findings) != len(rs) {
			err = fmt.Errorf("%d findings, want %d", len(res.Findings), len(rs))
		}
		done <- err
	}()
	res, err := e.Evaluate(urgency.Urgent(urgency.WithGate(ctx, g)), snapshot.Header{}, now, rs)
	if err != nil || len(res.Findings) != len(rs) {
		t.Fatalf("the urgent evaluation: %v, %v", res, err)
	}
	select {
	case err := <-done:
		t.Fatalf("the sweep's evaluation ended while urgent work ran: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	leave()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the sweep's evaluation still waits after the urgent work ended")
	}

	leave = g.Enter()
	defer leave()
	cctx, cancel := context.WithCancel(urgency.WithGate(ctx, g))
	go func() {
		_, err := e.Evaluate(cctx, snapshot.Header{}, now, rs)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled evaluation: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled evaluation still waits")
	}
}
