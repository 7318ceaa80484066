// Package cloudsim is a loopback AWS and GCP API simulator for tests, demos and
// benchmarks. It speaks the wire protocols the official SDKs use — AWS Query/XML (IAM,
// STS, EC2), AWS JSON (ACM, Organizations, Secrets Manager), AWS REST-XML (S3, path-style),
// AWS REST-JSON (Access Analyzer, Security Hub), GCP REST/JSON (Resource Manager, Compute)
// and gRPC (IAM admin, Recommender, Security Command Center) — on one HTTP port, so that
// warden's collectors, remediators and exporters run
// their real clients against it unchanged. Its state is a World, loaded from a file or
// built in code; faults (latency, throttling, 5xx, AccessDenied) and rate limits are
// injected per call, and every call is counted. Optionally (Options.EnforceIAM,
// aws.enforce_iam) the AWS calls of world users and role sessions are authorized against
// their identity policies (iam_enforce.go).
package cloudsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
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
	// EnforceIAM authorizes every AWS call of a world user or role session against its
	// identity policies (iam_enforce.go), as the world's aws.enforce_iam does; either
	// turns it on.
	EnforceIAM bool
}

// Sim is a running simulated cloud. It is safe for concurrent use; every API call runs
// under one lock, after its injected latency.
type Sim struct {
	mu    sync.Mutex
	world *World
	now   func() time.Time
	// genUsed is when the generated accounts' passwords, keys and roles in use were last
	// used (LargeAccount.Used); set once, when the simulator starts.
	genUsed time.Time
	// clockOffset is how far Advance moved the clock forward, in nanoseconds.
	clockOffset atomic.Int64
	log         *slog.Logger
	// enforceIAM is Options.EnforceIAM.
	enforceIAM bool

	// sessions maps access key ids the simulator issued (STS AssumeRole) to who holds them.
	sessions map[string]session
	// deletedKeys are the access key ids DeleteAccessKey removed: refused from then on.
	deletedKeys map[string]bool
	seq         int
	// gen builds the accounts of a generated organisation on demand (gen_cache.go); nil
	// when the world lists all its accounts.
	gen *genOrg
	// answers are the generated accounts' encoded read answers (answers.go); nil keeps
	// none.
	answers *answerCache
	// genProj builds the generated GCP projects on demand (gen_gcp.go); nil when the
	// world lists all its projects.
	genProj *genProjects
	// hubs is Security Hub, by "ACCOUNT/REGION" (securityhub.go).
	hubs map[string]*hubState
	// scc is Security Command Center's sources and findings (scc.go).
	scc *sccState

	faultMu  sync.Mutex
	rng      *rand.Rand
	limiters map[string]*rate.Limiter
	calls    map[string]*CallStats
	places   map[string]*PlaceCalls // by "service:Operation account region"
	hooks    map[string]func()      // OnNextCall, by "service:Operation"

	// signingKeys are SigV4 keys derived, by secret, day, region and service (signingKey).
	// Under mu.
	signingKeys map[string][]byte

	query map[string]map[string]queryHandler // service → action
	jsonx map[string]map[string]jsonHandler  // service → action
	rest  *http.ServeMux                     // GCP REST
	grpc  *grpc.Server                       // GCP gRPC
}

// session is the holder of temporary credentials.
type session struct {
	Account string
	ARN     string
	Secret  string // the secret access key the requests must be signed with
	// role is the world role the session acts as, on which its calls are recorded.
	role *Role
}

// CallStats counts the calls of one operation ("iam:GetAccountAuthorizationDetails").
type CallStats struct {
	Calls        int `json:"calls"`
	Throttled    int `json:"throttled"`
	Failed       int `json:"failed"` // injected 5xx
	AccessDenied int `json:"access_denied"`
	// Cancelled calls were abandoned by their client during the simulated latency, before
	// they ran: they changed nothing.
	Cancelled int `json:"cancelled,omitempty"`
	// Write marks an operation that changes the world (IsWrite).
	Write bool `json:"write,omitempty"`
}

// New builds a simulator over w, which it owns from then on (writes mutate it). Certificates
// given as specs are minted here.
func New(w *World, opts Options) (*Sim, error) {
	if w == nil {
		w = &World{}
	}
	s := &Sim{world: w, now: opts.Now, log: opts.Logger, enforceIAM: opts.EnforceIAM, sessions: map[string]session{}, deletedKeys: map[string]bool{},
		limiters: map[string]*rate.Limiter{}, calls: map[string]*CallStats{}, places: map[string]*PlaceCalls{}}
	base := s.now
	if base == nil && !w.Clock.IsZero() {
		started, at := time.Now(), w.Clock
		base = func() time.Time { return at.Add(time.Since(started)) }
	}
	if base == nil {
		base = time.Now
	}
	// The clock can be moved forward (Advance, POST /_sim/clock), so that a test driving
	// a separate process can let time pass: usage that ages, a key that gets old.
	s.now = func() time.Time { return base().Add(time.Duration(s.clockOffset.Load())) }
	// A week before the day the simulator started: far from the pack's 45- and 90-day
	// thresholds, and the same for every account it builds, however long it runs.
	s.genUsed = s.now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -7)
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
	if o := w.AWS.Organization; o != nil && o.Generated != nil {
		s.gen = s.newGenOrg(*o.Generated, o.Management)
		if mib := o.Generated.AnswerCacheMiB; mib > 0 {
			s.answers = newAnswerCache(mib)
		}
	}
	if g := w.GCP.Generated; g != nil {
		s.genProj = s.newGenProjects(*g)
	}
	s.query = map[string]map[string]queryHandler{"iam": s.iamHandlers(), "sts": s.stsHandlers(), "ec2": s.ec2Handlers()}
	s.jsonx = map[string]map[string]jsonHandler{"acm": s.acmHandlers(), "organizations": s.orgHandlers(), "secretsmanager": s.smHandlers()}
	s.rest = http.NewServeMux()
	s.gcpRoutes(s.rest)
	s.grpc = grpc.NewServer(grpc.UnaryInterceptor(s.grpcInterceptor))
	s.registerGRPC(s.grpc)
	return s, nil
}

// World returns the simulator's state. Callers must not use it while calls are served,
// except through Do. Generated accounts (aws.organization.generated) are not in it: they
// exist only while calls use them.
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
	return copyCounters(s.calls)
}

// copyCounters copies counters kept by pointer, for a caller outside the lock.
func copyCounters[T any](m map[string]*T) map[string]T {
	out := make(map[string]T, len(m))
	for k, v := range m {
		out[k] = *v
	}
	return out
}

// PlaceCalls counts the calls of one operation in one account and region that were
// served (not cancelled by their client while they waited): the place's share of
// CallStats.
type PlaceCalls struct {
	Calls int `json:"calls"`
	// Answered are those answered without a fault (throttling, denial, a 5xx).
	Answered int `json:"answered"`
}

// CallsByPlace returns a copy of the served calls' counters, by "service:Operation
// account region" ("iam:GetAccountSummary 111111111111 us-east-1"; the region is the
// one the call was signed for, or the service's).
func (s *Sim) CallsByPlace() map[string]PlaceCalls {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	return copyCounters(s.places)
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
	s.places = map[string]*PlaceCalls{}
}

// Handler serves every simulated API on one endpoint: gRPC (HTTP/2), AWS (requests signed
// with SigV4; S3 by the service of the signature), GCP REST (by path), and /_sim/ for the
// simulator's own state.
func (s *Sim) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		isGRPC := r.ProtoMajor == 2 && strings.HasPrefix(r.Header.Get("Content-Type"), "application/grpc")
		// S3 is REST-XML, not Query or JSON: it answers in its own shape, oversized
		// uploads included.
		if !isGRPC && isS3Request(r) {
			s.serveS3(w, r)
			return
		}
		// An oversized body is refused before it is read; one whose length was not
		// announced is refused by readBody when it passes the limit. gRPC bounds each
		// message itself.
		if !isGRPC && r.ContentLength > maxRequestBody {
			s.refuseTooLarge(w, r)
			return
		}
		switch {
		case isGRPC:
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

// Server is a simulator listening on a loopback port.
type Server struct {
	// URL is the endpoint to give the SDKs: AWS_ENDPOINT_URL and --gcp-endpoint.
	URL  string
	Addr string
	srv  *http.Server
	ln   net.Listener
	done chan struct{} // closed when Serve has returned, with its error in serveErr

	serveErr error

	mu       sync.Mutex
	conns    map[net.Conn]*connState
	draining bool // Shutdown has begun: connections that carry no call are closed
}

// connState is what the server knows of one connection: its last state as the
// http.Server.ConnState hook reports it (for HTTP/2 connections too, whose streams move
// them between active and idle), and a count of changes so that a delayed close can tell
// whether the connection was used in between.
type connState struct {
	state http.ConnState
	gen   int
}

// idleGrace is how long a stopping server leaves a connection without a call before it
// closes it: long enough for the last answer on it to be flushed (HTTP/2 reports a
// connection idle when its last stream ends, before the final frames are written), short
// enough that nobody notices.
const idleGrace = 50 * time.Millisecond

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
	srv := &Server{URL: "http://" + ln.Addr().String(), Addr: ln.Addr().String(), ln: ln,
		done: make(chan struct{}), conns: map[net.Conn]*connState{}}
	srv.srv = &http.Server{Handler: s.Handler(), Protocols: &p, ReadHeaderTimeout: 10 * time.Second, ConnState: srv.track}
	go func() {
		srv.serveErr = srv.srv.Serve(ln)
		close(srv.done)
	}()
	return srv, nil
}

// track follows every connection's state; once the server is stopping, it closes those
// that carry no call.
func (srv *Server) track(c net.Conn, st http.ConnState) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if st == http.StateClosed || st == http.StateHijacked {
		delete(srv.conns, c)
		return
	}
	cs := srv.conns[c]
	if cs == nil {
		cs = &connState{}
		srv.conns[c] = cs
	}
	cs.state = st
	cs.gen++
	if srv.draining {
		srv.closeIfUnused(c, cs)
	}
}

// closeIfUnused closes c after idleGrace if it carries no call (it is new, with no
// request read yet, or idle between calls) and has not been used meanwhile. net/http's
// Shutdown alone waits 5 s for a new connection, and an HTTP/2 connection stays open
// after GOAWAY until its client closes it or a timer runs out. srv.mu is held.
func (srv *Server) closeIfUnused(c net.Conn, cs *connState) {
	if cs.state != http.StateNew && cs.state != http.StateIdle {
		return
	}
	gen := cs.gen
	time.AfterFunc(idleGrace, func() {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		if srv.conns[c] == cs && cs.gen == gen {
			_ = c.Close()
		}
	})
}

// busy counts the connections carrying a call.
func (srv *Server) busy() int {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	n := 0
	for _, cs := range srv.conns {
		if cs.state == http.StateActive {
			n++
		}
	}
	return n
}

// Close stops the server at once.
func (srv *Server) Close() error {
	err := srv.srv.Close()
	<-srv.done
	if !errors.Is(srv.serveErr, http.ErrServerClosed) && err == nil {
		err = srv.serveErr
	}
	return err
}

// Shutdown stops the server after the calls in flight: it stops accepting, lets every
// call being served finish, and closes every connection that carries none (idle
// keep-alive and HTTP/2 connections, gRPC clients, connections that never sent a
// request) within idleGrace, without waiting for clients to hang up. When ctx ends first,
// the calls still running are cut and the error says how many.
func (srv *Server) Shutdown(ctx context.Context) error {
	srv.mu.Lock()
	srv.draining = true
	for c, cs := range srv.conns {
		srv.closeIfUnused(c, cs)
	}
	srv.mu.Unlock()
	err := srv.srv.Shutdown(ctx)
	if err != nil {
		n := srv.busy()
		_ = srv.srv.Close()
		err = fmt.Errorf("simulator: stop: %d connections with calls in flight cut at the deadline: %w", n, err)
	}
	<-srv.done
	return err
}

// nextID returns a fresh deterministic suffix for generated ids.
func (s *Sim) nextID() int {
	s.seq++
	return s.seq
}

// Advance moves the simulator's clock forward by d (d ≥ 0): times it stamps from then on
// (creations, last uses, jobs) are that much later.
func (s *Sim) Advance(d time.Duration) {
	if d > 0 {
		s.clockOffset.Add(int64(d))
		s.mu.Lock()
		s.answers.changedAll() // no kept answer outlives a move of the clock
		s.mu.Unlock()
	}
}
