// Package serve is warden serve, the long-running process. Run wires it: the
// remediation machine, the approval channels (Slack, the dashboard), the daemon over the
// live targets and the scheduled reports under one loop (reconcile/daemon.Loop), which
// applies what became ready; and Server, the HTTP server of health, readiness and every
// channel's routes.
//
// Stopping it (its context ends, on SIGTERM) drains: /readyz answers 503, the server
// stops taking requests (those under way get up to 10 s), the loop finishes the action
// in flight and records it, and nothing new starts.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Options configure a Server.
type Options struct {
	// Ready reports whether the server can do its work (the database answers); /readyz
	// answers 503 when it returns an error. Optional.
	Ready func(ctx context.Context) error
	// Routes are the channels' endpoints, by pattern ("POST /slack/interactions").
	Routes map[string]http.Handler
	Logger *slog.Logger
}

// Server is warden serve's HTTP server.
type Server struct {
	opts     Options
	log      *slog.Logger
	draining atomic.Bool
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: opts.Logger}
}

// Handler is the server's HTTP handler: /healthz, /readyz and the channels' routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.draining.Load() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		if s.opts.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := s.opts.Ready(ctx); err != nil {
				// The reason names the database, not its address or credentials.
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	for pattern, h := range s.opts.Routes {
		mux.Handle(pattern, h)
	}
	return mux
}

// Run serves on ln until ctx ends, then drains: the listener stops taking requests
// (those under way get up to 10 s). It returns nil after a clean drain.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		// The listener failed.
	}
	s.draining.Store(true)
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdown); serr != nil && err == nil {
		err = fmt.Errorf("drain the HTTP server: %w", serr)
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}
