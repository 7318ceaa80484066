package cloudsim

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true,
		"0.0.0.0:4566": false, ":4566": false, "10.1.2.3:4566": false, "nohostport": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// Serve answers calls once it says it serves, with --latency over the world's, and
// returns nil when its context ends.
func TestServe_servesUntilTheContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	serving := make(chan string, 1)
	go func() {
		done <- Serve(ctx, ServeOptions{Listen: "127.0.0.1:0", Latency: 20 * time.Millisecond, Serving: func(w *World, url string) {
			if time.Duration(w.Latency) != 20*time.Millisecond {
				t.Errorf("world latency %s, want 20ms", time.Duration(w.Latency))
			}
			serving <- url
		}})
	}()
	var url string
	select {
	case url = <-serving:
	case err := <-done:
		t.Fatalf("Serve returned before serving: %v", err)
	}
	resp, err := http.Get(url + "/_sim/calls")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET /_sim/calls: %s", resp.Status)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after its context ended: %v", err)
	}
}
