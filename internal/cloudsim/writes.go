package cloudsim

import (
	"strings"
)

// Write calls: the operations that change a world, as opposed to those that read it. Tests
// of dry runs and of idempotent fixes assert on them ("a second Apply made no write").

// readPrefixes are the operation name prefixes of the calls that only read. Every other
// operation the simulator serves changes the world (or would, were it not refused).
var readPrefixes = []string{"Get", "List", "Describe", "Search", "Head"}

// readOps are the reads whose name does not say so: a credential report or an Access
// Advisor report is generated for the caller to read, an STS session is a credential, not a change to the account;
// Compute's aggregated lists are lists.
var readOps = map[string]bool{
	"iam:GenerateCredentialReport":            true,
	"iam:GenerateServiceLastAccessedDetails":  true,
	"sts:AssumeRole":                          true,
	"iamadmin:TestIamPermissions":             true,
	"cloudresourcemanager:TestIamPermissions": true,
	"compute:AggregatedListInstances":         true, // instances.aggregatedList
}

// IsWrite reports whether the operation of a service (as Calls keys them: "iam",
// "UpdateAccessKey") changes the world.
func IsWrite(service, action string) bool {
	if readOps[service+":"+action] {
		return false
	}
	for _, p := range readPrefixes {
		if strings.HasPrefix(action, p) {
			return false
		}
	}
	return true
}

// Writes returns the write calls served since the counters were last reset, by
// "service:Operation", each with its number of calls (refused ones included: a denied
// or throttled write was still attempted; calls their client abandoned before they ran
// are not: they wrote nothing). Operations never called are left out.
func (s *Sim) Writes() map[string]int {
	out := map[string]int{}
	for k, v := range s.Calls() {
		service, action, _ := strings.Cut(k, ":")
		// A call abandoned before it ran wrote nothing.
		if n := v.Calls - v.Cancelled; n > 0 && IsWrite(service, action) {
			out[k] = n
		}
	}
	return out
}

// WriteCount is the number of write calls served since the counters were last reset.
func (s *Sim) WriteCount() int {
	n := 0
	for _, c := range s.Writes() {
		n += c
	}
	return n
}

// OnNextCall runs fn once, just before the next call of op ("cloudresourcemanager:SetIamPolicy")
// is admitted, outside the simulator's lock: fn may itself call the simulator (through an
// SDK client) to change what the call will find. Tests use it to slip a concurrent writer
// between a client's read and its write. A later OnNextCall of the same op replaces fn.
func (s *Sim) OnNextCall(op string, fn func()) {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	if s.hooks == nil {
		s.hooks = map[string]func(){}
	}
	s.hooks[op] = fn
}

// takeHook removes and returns the hook waiting for op, if any.
func (s *Sim) takeHook(op string) func() {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	fn := s.hooks[op]
	delete(s.hooks, op)
	return fn
}
