package cloudsim

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"time"

	"golang.org/x/time/rate"
)

// Fault is an injected failure, matched against every call. Empty match fields match
// anything; the first matching fault with a given effect applies.
type Fault struct {
	Service string `yaml:"service,omitempty"` // iam, sts, ec2, acm, organizations, cloudresourcemanager, iamadmin, recommender, compute
	Action  string `yaml:"action,omitempty"`  // operation name, a glob ("List*")
	Account string `yaml:"account,omitempty"` // AWS account id, GCP project id, or organizations/N, folders/N
	Region  string `yaml:"region,omitempty"`
	// Writes matches only the calls that change the world (IsWrite): latency or
	// AccessDenied on every write while reads go through.
	Writes bool `yaml:"writes,omitempty"`
	// Latency is added to the call, before it is served: a client that gives up meanwhile
	// leaves the call unmade.
	Latency Duration `yaml:"latency,omitempty"`
	// AnswerLatency delays the answer of a call already served: a client that gives up
	// meanwhile (a timeout, a killed process) never learns what the call did.
	AnswerLatency Duration `yaml:"answer_latency,omitempty"`
	// ThrottleRate is the share of calls throttled (0–1).
	ThrottleRate float64 `yaml:"throttle_rate,omitempty"`
	// ErrorRate is the share of calls answered with a 5xx (0–1); 1 takes the scope down.
	ErrorRate float64 `yaml:"error_rate,omitempty"`
	// AccessDenied denies every matching call.
	AccessDenied bool `yaml:"access_denied,omitempty"`
	// Message replaces the default error message.
	Message string `yaml:"message,omitempty"`
}

func (f Fault) validate() error {
	if f.ThrottleRate < 0 || f.ThrottleRate > 1 || f.ErrorRate < 0 || f.ErrorRate > 1 {
		return fmt.Errorf("throttle_rate and error_rate are shares between 0 and 1")
	}
	if _, err := path.Match(f.Action, ""); err != nil {
		return fmt.Errorf("action %q: %v", f.Action, err)
	}
	return nil
}

func (f Fault) matches(c *call) bool {
	if f.Service != "" && f.Service != c.Service {
		return false
	}
	if f.Account != "" && f.Account != c.Account {
		return false
	}
	if f.Region != "" && f.Region != c.Region {
		return false
	}
	if f.Writes && !IsWrite(c.Service, c.Action) {
		return false
	}
	if f.Action != "" {
		if ok, _ := path.Match(f.Action, c.Action); !ok {
			return false
		}
	}
	return true
}

// errKind is what went wrong, rendered by each protocol in its own words.
type errKind int

const (
	kindInvalid errKind = iota
	kindNotFound
	kindConflict
	kindLimit
	kindThrottle
	kindDenied
	kindUnavailable
	kindInternal
)

// apiError is an error answered to a call. Code and Status default from the kind and
// the protocol.
type apiError struct {
	Kind    errKind
	Code    string
	Message string
	// Status overrides the HTTP status the kind implies (IAM's ReportNotPresent is a 410).
	Status int
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func errf(kind errKind, code, format string, args ...any) *apiError {
	return &apiError{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// admit applies rate limits and faults to a call, counts it, and sleeps its latency. A
// non-nil error is the call's answer.
func (s *Sim) admit(ctx context.Context, c *call) *apiError {
	key := c.Service + ":" + c.Action
	if hook := s.takeHook(key); hook != nil {
		hook()
	}
	s.faultMu.Lock()
	st := s.calls[key]
	if st == nil {
		st = &CallStats{Write: IsWrite(c.Service, c.Action)}
		s.calls[key] = st
	}
	st.Calls++
	if c.authErr != nil {
		st.AccessDenied++
		s.countPlace(key, c, false)
		s.faultMu.Unlock()
		return c.authErr
	}
	latency := time.Duration(s.world.Latency)
	var out *apiError
	if lim, ok := s.world.RateLimits[c.Service]; ok && lim > 0 {
		lk := c.Service + "/" + c.Account
		l := s.limiters[lk]
		if l == nil {
			l = rate.NewLimiter(rate.Limit(lim), max(2, int(math.Ceil(lim/10))))
			s.limiters[lk] = l
		}
		if !l.Allow() {
			out = &apiError{Kind: kindThrottle, Message: "Rate exceeded"}
		}
	}
	faults := s.world.Faults
	if gf := s.generatedFault(c.Account); gf != nil {
		faults = append(slices.Clip(faults), *gf) // the generated account's or project's own fault
	}
	for _, f := range faults {
		if !f.matches(c) {
			continue
		}
		latency += time.Duration(f.Latency)
		c.answerLatency += time.Duration(f.AnswerLatency)
		if out != nil {
			continue
		}
		msg := f.Message
		switch {
		case f.AccessDenied:
			if msg == "" {
				msg = fmt.Sprintf("User: %s is not authorized to perform: %s:%s", c.Principal, c.Service, c.Action)
			}
			out = &apiError{Kind: kindDenied, Message: msg}
		case f.ThrottleRate > 0 && s.rng.Float64() < f.ThrottleRate:
			if msg == "" {
				msg = "Rate exceeded"
			}
			out = &apiError{Kind: kindThrottle, Message: msg}
		case f.ErrorRate > 0 && s.rng.Float64() < f.ErrorRate:
			if msg == "" {
				msg = "Service is unavailable, please retry"
			}
			out = &apiError{Kind: kindUnavailable, Message: msg}
		}
	}
	if out != nil {
		switch out.Kind {
		case kindThrottle:
			st.Throttled++
		case kindDenied:
			st.AccessDenied++
		default:
			st.Failed++
		}
	}
	s.faultMu.Unlock()
	if latency > 0 {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-ctx.Done():
			// The client went away (killed, timed out) before the call ran: it changed
			// nothing, and write counters must not count it.
			s.faultMu.Lock()
			st.Cancelled++
			s.faultMu.Unlock()
			return &apiError{Kind: kindUnavailable, Message: "request cancelled"}
		case <-t.C:
		}
	}
	s.faultMu.Lock()
	s.countPlace(key, c, out == nil)
	s.faultMu.Unlock()
	s.log.Debug("call", "service", c.Service, "action", c.Action, "account", c.Account, "region", c.Region, "fault", out != nil)
	if out != nil {
		c.answerLatency = 0
	}
	return out
}

// countPlace counts a call served, of operation key, in its account and region
// (CallsByPlace); answered: without a fault. s.faultMu is held.
func (s *Sim) countPlace(key string, c *call, answered bool) {
	pk := key + " " + c.Account + " " + c.Region
	pc := s.places[pk]
	if pc == nil {
		pc = &PlaceCalls{}
		s.places[pk] = pc
	}
	pc.Calls++
	if answered {
		pc.Answered++
	}
}

// delayAnswer waits out the call's AnswerLatency, after it was served; a client gone
// meanwhile ends the wait (its answer is lost, the call's effect is not).
func (s *Sim) delayAnswer(ctx context.Context, c *call) {
	if c.answerLatency <= 0 {
		return
	}
	t := time.NewTimer(c.answerLatency)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// call is one API call as the simulator sees it.
type call struct {
	ctx       context.Context
	Service   string // iam, sts, ec2, acm, organizations, cloudresourcemanager, iamadmin, recommender, compute
	Action    string
	Account   string // AWS account id or GCP project id
	Region    string // AWS region ("global" for IAM, STS), GCP location
	Principal string // the caller's ARN or email
	ReqID     string
	// authErr refuses the call's credentials (AWS: an inactive or deleted key, a wrong
	// signature): admit answers it before any fault.
	authErr *apiError
	// answerLatency is the faults' AnswerLatency, waited after the call is served.
	answerLatency time.Duration
	// usedBy is where a call served successfully is recorded (recordAccess): the
	// LastAccessed of the user whose key signed it or of the role whose session did; nil
	// for the root user and unknown keys.
	usedBy *[]AccessRecord
	// signRegion is the region of the request's signature (Region is "global" for IAM).
	signRegion string
	// akid is the access key id that signed the request, by which authorize finds whose
	// policies apply.
	akid string
}
