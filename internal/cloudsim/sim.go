// Package cloudsim is a loopback AWS and GCP API simulator for tests, demos and
// benchmarks. It speaks the wire protocols the official SDKs use — AWS Query/XML (IAM,
// STS, EC2), AWS JSON (ACM, Organizations), GCP REST/JSON (Resource Manager, Compute) and
// gRPC (IAM admin) — on one HTTP port, so that warden's collectors and remediators run
// their real clients against it unchanged. Its state is a World, loaded from a file or
// built in code; faults (latency, throttling, 5xx, AccessDenied) and rate limits are
// injected per call, and every call is counted.
package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc"
)

// Options tune a simulator.
type Options struct {
	// Now is the simulator's clock, used for creation and last-used times of writes;
	// default time.Now.
	Now func() time.Time
	// Logger receives one debug line per call; default discards.
	Logger *slog.Logger
}

// Sim is a running simulated cloud. It is safe for concurrent use; every API call runs
// under one lock, after its injected latency.
type Sim struct {
	mu    sync.Mutex
	world *World
	now   func() time.Time
	log   *slog.Logger

	// sessions maps access key ids the simulator issued (STS AssumeRole) to who holds them.
	sessions map[string]session
	seq      int

	faultMu  sync.Mutex
	rng      *rand.Rand
	limiters map[string]*rate.Limiter
	calls    map[string]*CallStats

	query map[string]map[string]queryHandler // service → action
	jsonx map[string]map[string]jsonHandler  // service → action
	rest  *http.ServeMux                     // GCP REST
	grpc  *grpc.Server                       // GCP gRPC
}

// session is the holder of temporary credentials.
type session struct {
	Account string
	ARN     string
}

// CallStats counts the calls of one operation ("iam:GetAccountAuthorizationDetails").
type CallStats struct {
	Calls        int `json:"calls"`
	Throttled    int `json:"throttled"`
	Failed       int `json:"failed"` // injected 5xx
	AccessDenied int `json:"access_denied"`
}

// New builds a simulator over w, which it owns from then on (writes mutate it). Certificates
// given as specs are minted here.
func New(w *World, opts Options) (*Sim, error) {
	if w == nil {
		w = &World{}
	}
	s := &Sim{world: w, now: opts.Now, log: opts.Logger, sessions: map[string]session{},
		limiters: map[string]*rate.Limiter{}, calls: map[string]*CallStats{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	seed := w.Seed
	if seed == 0 {
		seed = 1
	}
	s.rng = rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	if err := s.prepare(); err != nil {
		return nil, err
	}
	s.query = map[string]map[string]queryHandler{"iam": s.iamHandlers(), "sts": s.stsHandlers(), "ec2": s.ec2Handlers()}
	s.jsonx = map[string]map[string]jsonHandler{"acm": s.acmHandlers(), "organizations": s.orgHandlers()}
	s.rest = http.NewServeMux()
	s.gcpRoutes(s.rest)
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.grpcInterceptor))
	s.registerGRPC(s.grpc)
	return s, nil
}

// World returns the simulator's state. Callers must not use it while calls are served,
// except through Do.
func (s *Sim) World() *World { return s.world }

// Do runs f on the world under the simulator's lock, for tests that seed or inspect state
// while the simulator serves.
func (s *Sim) Do(f func(w *World)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s.world)
}

// SetFaults replaces the injected faults and rate limits.
func (s *Sim) SetFaults(faults []Fault, limits map[string]float64) error {
	for i, f := range faults {
		if err := f.validate(); err != nil {
			return fmt.Errorf("fault %d: %w", i, err)
		}
	}
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.world.Faults = faults
	s.world.RateLimits = limits
	s.limiters = map[string]*rate.Limiter{}
	return nil
}

// SetLatency sets the latency added to every call.
func (s *Sim) SetLatency(d time.Duration) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.world.Latency = Duration(d)
}

// Calls returns a copy of the call counters, by "service:Operation".
func (s *Sim) Calls() map[string]CallStats {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	out := make(map[string]CallStats, len(s.calls))
	for k, v := range s.calls {
		out[k] = *v
	}
	return out
}

// CallsTo sums the calls made to one service ("iam", "ec2", "compute", …).
func (s *Sim) CallsTo(service string) int {
	n := 0
	for k, v := range s.Calls() {
		if strings.HasPrefix(k, service+":") {
			n += v.Calls
		}
	}
	return n
}

// ResetCalls zeroes the call counters.
func (s *Sim) ResetCalls() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	s.calls = map[string]*CallStats{}
}

// Handler serves every simulated API on one endpoint: gRPC (HTTP/2), AWS (requests signed
// with SigV4), GCP REST (by path), and /_sim/ for the simulator's own state.
func (s *Sim) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc"):
			s.grpc.ServeHTTP(w, r)
		case strings.HasPrefix(r.URL.Path, "/_sim/"):
			s.serveAdmin(w, r)
		case strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256"):
			s.serveAWS(w, r)
		default:
			s.serveGCP(w, r)
		}
	})
}

func (s *Sim) serveAdmin(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/_sim/calls":
		calls := s.Calls()
		keys := make([]string, 0, len(calls))
		for k := range calls {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(calls)
	case "/_sim/health":
		fmt.Fprintln(w, "ok")
	default:
		http.NotFound(w, r)
	}
}

// Server is a simulator listening on a loopback port.
type Server struct {
	// URL is the endpoint to give the SDKs: AWS_ENDPOINT_URL and --gcp-endpoint.
	URL  string
	Addr string
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// Listen starts serving s on addr ("127.0.0.1:0" picks a free port), with plain HTTP/1.1
// and unencrypted HTTP/2 (for gRPC) on the same port.
func (s *Sim) Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: listen %s: %w", addr, err)
	}
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: s.Handler(), Protocols: &p, ReadHeaderTimeout: 10 * time.Second}
	srv := &Server{URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), srv: hs, ln: ln, done: make(chan error, 1)}
	go func() { srv.done <- hs.Serve(ln) }()
	return srv, nil
}

// Close stops the server at once.
func (srv *Server) Close() error {
	err := srv.srv.Close()
	if e := <-srv.done; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}

// Shutdown stops the server after the calls in flight.
func (srv *Server) Shutdown(ctx context.Context) error { return srv.srv.Shutdown(ctx) }

// nextID returns a fresh deterministic suffix for generated ids.
func (s *Sim) nextID() int {
	s.seq++
	return s.seq
}
