package serve_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warden-sec/warden/serve"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The server answers health always, readiness as its Ready says, and the routes it was
// given; a stop drains it and Run returns nil.
func TestServer_answersHealthReadinessAndRoutes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	srv := serve.New(serve.Options{
		Ready: func(context.Context) error {
			if down.Load() {
				return errors.New("database: connection refused")
			}
			return nil
		},
		Routes: map[string]http.Handler{"GET /hello": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, "hi")
		})}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	if code, body := get(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get(t, base+"/readyz"); code != 200 || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	if code, body := get(t, base+"/hello"); code != 200 || body != "hi" {
		t.Errorf("/hello: %d %q", code, body)
	}
	down.Store(true)
	if code, body := get(t, base+"/readyz"); code != 503 || body != "not ready: database: connection refused\n" {
		t.Errorf("/readyz with the database down: %d %q", code, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after the stop: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after the stop")
	}
}
