package backoff_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/backoff"
)

func TestWindow_doublesFromBaseUpToMax(t *testing.T) {
	const base, max = 200 * time.Millisecond, 20 * time.Second
	tests := []struct {
		attempt int
		want    time.Duration
	}{
		{0, base}, // taken as the first retry
		{1, base},
		{2, 2 * base},
		{3, 4 * base},
		{7, 64 * base},
		{8, max}, // 128·200ms = 25.6s, capped
		{1000, max},
		{int(^uint(0) >> 1), max},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.attempt), func(t *testing.T) {
			if got := backoff.Window(base, max, tc.attempt); got != tc.want {
				t.Errorf("Window(%v, %v, %d) = %v, want %v", base, max, tc.attempt, got, tc.want)
			}
		})
	}
}

func TestWindow_degenerateBounds(t *testing.T) {
	tests := []struct {
		name      string
		base, max time.Duration
		attempt   int
		want      time.Duration
	}{
		{"no base", 0, time.Second, 5, 0},
		{"no max", time.Second, 0, 5, 0},
		{"max below base", time.Second, 100 * time.Millisecond, 5, 100 * time.Millisecond},
		{"doubling would overflow", 1 << 62, 1<<63 - 1, 3, 1<<63 - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoff.Window(tc.base, tc.max, tc.attempt); got != tc.want {
				t.Errorf("Window(%v, %v, %d) = %v, want %v", tc.base, tc.max, tc.attempt, got, tc.want)
			}
		})
	}
}

// TestFullJitter_staysInWindowAndSpreads draws many delays per attempt: each lies in
// [0, window], and they spread over the window (full jitter, not equal jitter: the lower
// half is drawn too).
func TestFullJitter_staysInWindowAndSpreads(t *testing.T) {
	const base, max = 10 * time.Millisecond, time.Second
	for attempt := 1; attempt <= 10; attempt++ {
		w := backoff.Window(base, max, attempt)
		var low, high bool
		for range 2000 {
			d := backoff.FullJitter(base, max, attempt)
			if d < 0 || d > w {
				t.Fatalf("attempt %d: delay %v outside [0, %v]", attempt, d, w)
			}
			low = low || d < w/4
			high = high || d > 3*w/4
		}
		if !low || !high {
			t.Errorf("attempt %d: 2000 delays never fell in the lowest (%v) or highest (%v) quarter of %v", attempt, low, high, w)
		}
	}
}

func TestFullJitter_zeroBoundsNoDelay(t *testing.T) {
	if d := backoff.FullJitter(0, 0, 3); d != 0 {
		t.Errorf("FullJitter(0, 0, 3) = %v, want 0", d)
	}
}

func ExampleFullJitter() {
	// The third retry waits a random time up to 200ms·2² = 800ms.
	d := backoff.FullJitter(200*time.Millisecond, 20*time.Second, 3)
	fmt.Println(d <= 800*time.Millisecond)
	// Output: true
}

// closedPort is a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// TestUnreachable: a refused connection, an unknown host and the text a gRPC status keeps
// of them are failures no retry mends within a run; throttling, 5xx, resets, timeouts and
// cancellation are not.
func TestUnreachable(t *testing.T) {
	_, refused := net.Dial("tcp", closedPort(t))
	_, httpRefused := http.Get("http://" + closedPort(t) + "/")
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"dial refused", refused, true},
		{"HTTP request refused, wrapped", fmt.Errorf("operation error STS: GetCallerIdentity: %w", httpRefused), true},
		{"no such host", &net.DNSError{Err: "no such host", Name: "sts.example.invalid", IsNotFound: true}, true},
		{"gRPC status text", errors.New(`rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused"`), true},
		{"no route", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)}, true},
		{"DNS timeout", &net.DNSError{Err: "i/o timeout", Name: "sts.amazonaws.com", IsTimeout: true}, false},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, false},
		{"throttled", errors.New("api error Throttling: Rate exceeded"), false},
		{"5xx", errors.New("StatusCode: 503, api error ServiceUnavailable"), false},
		{"deadline", context.DeadlineExceeded, false},
		{"nil", nil, false},
	} {
		if tc.err == nil && tc.name != "nil" {
			t.Fatalf("%s: the dial did not fail", tc.name)
		}
		if got := backoff.Unreachable(tc.err); got != tc.want {
			t.Errorf("%s: Unreachable(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
