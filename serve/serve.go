// Package serve is warden's long-running process: an HTTP server for the approval
// channels (Slack's interaction endpoint, health and readiness) and a worker that applies
// what became ready — an approval request that reached its quorum, a multi-step fix whose
// next step is due — with the same code as warden apply (remediate.Machine.ApplyDue), and
// keeps the channels' messages in step with the store.
//
// Stopping it (its context ends, on SIGTERM) drains: the server stops taking requests,
// the action in flight finishes and is recorded, and nothing new starts.
package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/warden-sec/warden/remediate"
)

// DefaultInterval is how often the worker looks for work when nothing wakes it.
const DefaultInterval = 5 * time.Second

// Syncer keeps a channel's view in step with the store (Slack messages posted and
// updated); it runs after every pass of the worker and must be idempotent.
type Syncer interface {
	Sync(ctx context.Context) error
}

// Options configure a Server.
type Options struct {
	// Machine applies what is due.
	Machine *remediate.Machine
	// DryRun never applies: the worker only syncs the channels (warden serve --dry-run).
	DryRun bool
	// Ready reports whether the server can do its work (the database answers); /readyz
	// answers 503 when it returns an error. Optional.
	Ready func(ctx context.Context) error
	// Routes are the channels' endpoints, by pattern ("POST /slack/interactions").
	Routes map[string]http.Handler
	// Syncers run after each pass of the worker.
	Syncers []Syncer
	// Interval between passes when nothing wakes the worker (default DefaultInterval).
	Interval time.Duration
	Logger   *slog.Logger
}

// Server is warden serve: the HTTP endpoints and the worker.
type Server struct {
	opts     Options
	log      *slog.Logger
	wake     chan struct{}
	draining atomic.Bool
	// passes and failures count the worker's passes, for tests and /readyz.
	passes, failures atomic.Int64
	mu               sync.Mutex
	last             *remediate.Result
}

// New returns a Server.
func New(opts Options) *Server {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Server{opts: opts, log: opts.Logger, wake: make(chan struct{}, 1)}
}

// Wake asks the worker for a pass now (an approval was just recorded); it never blocks.
func (s *Server) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Passes reports how many passes the worker completed, and how many of them failed.
func (s *Server) Passes() (done, failed int64) { return s.passes.Load(), s.failures.Load() }

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

// Run serves on ln and runs the worker until ctx ends, then drains: the listener stops
// taking requests (those under way get up to 10 s), the worker finishes the action in
// flight and stops. It returns nil after a clean drain.
func (s *Server) Run(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelWarn)}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	worked := make(chan struct{})
	go func() {
		defer close(worked)
		s.work(ctx)
	}()
	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		// The listener failed: stop the worker too.
	}
	s.draining.Store(true)
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdown); serr != nil && err == nil {
		err = fmt.Errorf("drain the HTTP server: %w", serr)
	}
	<-worked
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// work runs passes until ctx ends. A pass runs on a context that outlives ctx, so that
// the action in flight when the stop comes completes and is recorded; the machine stops
// between actions once ctx has ended.
func (s *Server) work(ctx context.Context) {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		s.Pass(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// Pass runs the worker once: apply what is due, then sync the channels. Errors are
// logged and counted, never fatal: the next pass tries again.
func (s *Server) Pass(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	failed := false
	var res *remediate.Result
	var err error
	if !s.opts.DryRun {
		res, err = s.opts.Machine.ApplyDue(ctx)
	}
	switch {
	case errors.Is(err, remediate.ErrPaused):
		s.log.Info("remediation is paused: nothing applied", "err", err)
	case err != nil && ctx.Err() == nil:
		failed = true
		s.log.Error("apply what is due", "err", err)
	case res != nil:
		s.mu.Lock()
		s.last = res
		s.mu.Unlock()
		for _, it := range res.Items {
			s.log.Info("action", "id", it.Action, "remediator", it.Remediator, "state", it.State, "outcome", it.Outcome)
		}
	}
	// The channels are synced even while draining: the outcome just recorded is shown.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for _, sy := range s.opts.Syncers {
		if err := sy.Sync(sctx); err != nil {
			failed = true
			s.log.Error("sync a channel", "err", err)
		}
	}
	s.passes.Add(1)
	if failed {
		s.failures.Add(1)
	}
}

// Last is the result of the worker's latest pass that applied anything or tried to.
func (s *Server) Last() *remediate.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
