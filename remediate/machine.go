package remediate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
)

// Observer reads one resource of the cloud again by uid (a collector's Reader, routed by
// cloud). It returns collectors.ErrNotFound only when the cloud says the resource is gone.
type Observer interface {
	Read(ctx context.Context, uid string) (snapshot.Resource, error)
}

// Options wire a Machine.
type Options struct {
	Store    *store.Store
	Log      *audit.Log
	Gate     *gates.Gate
	Gates    gates.Config
	Registry *remediators.Registry
	Observer Observer
	// Engine re-evaluates a fixed resource: the finding must be gone.
	Engine *engine.Engine
	// Actor names who runs the commands, in every event.
	Actor string
	// Versions are version events (scan.VersionEvents: the policy pack, the config)
	// recorded with a plan, each when its subject changed since it was last recorded.
	Versions []audit.Event
	Limits   Limits
	Now      func() time.Time
	Logger   *slog.Logger
	// InFlightLease is how long an action another process left applying is taken to be
	// in flight rather than interrupted: Recover leaves it alone until then. 0 takes every
	// such action for interrupted (warden apply after a crash); the daemon, whose
	// replicas and workers apply side by side, sets it above its job timeout.
	InFlightLease time.Duration
	// Reach says why this process cannot reach a target's cloud (no target or
	// credentials for it: "no AWS target: start warden serve with --aws …"), or "" when it
	// can. ApplyDue leaves such an action as it is, ready for a process that can apply
	// it, instead of failing its re-check. Nil: every target is taken to be reachable.
	Reach func(target string) string
	// Forged is called with the number of decisions the gate stage found forged and
	// counted as none (gates.Check: checked mode only), for warden_forged_decisions_total.
	Forged func(n int)
}

// Machine applies plans, resolves interrupted actions and rolls fixes back. It is the
// only writer of action states (record.go).
type Machine struct {
	st       *store.Store
	log      *audit.Log
	gate     *gates.Gate
	gcfg     gates.Config
	reg      *remediators.Registry
	obs      Observer
	eng      *engine.Engine
	actor    string
	versions []audit.Event
	limits   Limits
	now      func() time.Time
	logger   *slog.Logger
	lease    time.Duration
	reach    func(target string) string
	forged   func(n int)
	// inflight holds the ids of the actions this Machine is applying now: Recover never
	// takes them for interrupted, whatever the lease.
	inflight sync.Map
}

// New returns a Machine.
func New(o Options) *Machine {
	m := &Machine{st: o.Store, log: o.Log, gate: o.Gate, gcfg: o.Gates, reg: o.Registry, obs: o.Observer, eng: o.Engine,
		actor: o.Actor, versions: o.Versions, limits: o.Limits.withDefaults(), now: o.Now, logger: o.Logger,
		lease: o.InFlightLease, reach: o.Reach, forged: o.Forged}
	if m.now == nil {
		m.now = time.Now
	}
	if m.logger == nil {
		m.logger = slog.New(slog.DiscardHandler)
	}
	return m
}

// ErrPaused is returned by Apply and Rollback while remediation is paused.
var ErrPaused = errors.New("remediation is paused")

// inTx runs fn in one store transaction that runs alone (store.InTx): for what may touch
// any action's rows (expiring every overdue approval request, a plan of several
// targets) or a global row (the pause control).
func (m *Machine) inTx(ctx context.Context, fn func(tx *store.Tx) error) error {
	return m.st.InTx(ctx, fn)
}

// TargetPartition is the store partition (store.InTxOn) of the transactions that change
// the actions of one cloud target (a resource uid): warden serve's fix jobs of different
// targets, in one replica or several, commit side by side on PostgreSQL.
//
// Such a transaction touches only rows of the target's actions: their rows and history
// (actions, action_events), their approval requests and decisions (gates), the plan
// rows of a plan of that target alone (plans, keyed by a hash of its actions), and the
// audit log, which serializes its appends itself (Tx.Serialize). An action's id names
// its target, so two transactions of one action always take the same partition and
// wait for each other; every other writer of those rows (an approver's decision, the
// expiry of overdue requests, warden apply's plan of many targets) takes the whole
// store (InTx) and so waits for them all. Observations write none of these rows (they
// write resources, findings and scopes, by scope): a fix and an observation need not
// exclude each other.
func TargetPartition(target string) string { return "target/" + target }

// inTxOn runs fn in one store transaction of the actions of target (TargetPartition):
// fn must touch no other action.
func (m *Machine) inTxOn(ctx context.Context, target string, fn func(tx *store.Tx) error) error {
	return m.st.InTxOn(ctx, TargetPartition(target), fn)
}

func (m *Machine) remediator(r *Record) (remediators.Remediator, error) {
	rem, ok := m.reg.Get(r.Remediator)
	if !ok {
		return nil, fmt.Errorf("action %s: no remediator %s in this warden", r.ID, r.Remediator)
	}
	return rem, nil
}

// Readers is an Observer over several collectors: each uid is read by the first that
// supports it (collectors.ErrUnsupported passes it on).
type Readers []collectors.Reader

// Read implements Observer.
func (rs Readers) Read(ctx context.Context, uid string) (snapshot.Resource, error) {
	for _, r := range rs {
		res, err := r.Read(ctx, uid)
		if errors.Is(err, collectors.ErrUnsupported) {
			continue
		}
		return res, err
	}
	return snapshot.Resource{}, fmt.Errorf("read %s: no collector of this run reads it (is its cloud among the targets?)", uid)
}
