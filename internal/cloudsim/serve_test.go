package cloudsim

import (
	"context"
	"net/http"
	"testing"
	"time"
)

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
