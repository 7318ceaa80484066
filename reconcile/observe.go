package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// DefaultFullEvery is how long a scope's unchanged resources go without being evaluated
// again: policies measure ages (a key unused for 90 days), which move on while nothing
// changes.
const DefaultFullEvery = 24 * time.Hour

// Options configure a Reconciler.
type Options struct {
	Store  *store.Store
	Log    *audit.Log
	Engine *engine.Engine
	// Waivers suppress findings as in warden scan; nil has none.
	Waivers *waivers.Set
	// WaiversFile, when set, is where the waivers are read from instead, again whenever
	// it changes (the dashboard adds to it while the daemon runs); a change makes every
	// scope evaluated in full at its next read, as a new policy pack does.
	WaiversFile string
	// EvalVersion names what judges findings: the policy pack and the settings. A scope
	// judged with another version is evaluated in full. Default the engine's version.
	EvalVersion string
	// FullEvery bounds how long an unchanged resource goes unevaluated (default
	// DefaultFullEvery).
	FullEvery time.Duration
	// Actor records who observed, in the audit log (default "warden").
	Actor  string
	Now    func() time.Time
	Logger *slog.Logger
}

// Reconciler keeps the daemon's view of each scope: it takes what a read of a scope
// observed, evaluates only what changed, and moves each finding along its life (opened,
// seen, unknown, resolved), recording each opening and resolution in the audit log in
// the same transaction.
type Reconciler struct {
	o  Options
	wf *waiverFile // nil without Options.WaiversFile
}

// New returns a Reconciler.
func New(o Options) *Reconciler {
	if o.EvalVersion == "" && o.Engine != nil {
		o.EvalVersion = o.Engine.Version()
	}
	if o.FullEvery <= 0 {
		o.FullEvery = DefaultFullEvery
	}
	if o.Actor == "" {
		o.Actor = "warden"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Reconciler{o: o}
	if o.WaiversFile != "" {
		r.wf = &waiverFile{path: o.WaiversFile, set: o.Waivers}
	}
	return r
}

// Observation is what one read of one scope saw.
type Observation struct {
	// Scope is the scope as read: its status says whether Resources are all of it (ok),
	// some of it (partial) or nothing trustworthy (failed).
	Scope snapshot.Scope
	// Resources are the scope's resources as read (none for a failed scope).
	Resources []snapshot.Resource
	// Accounts are the organisation's accounts and projects, which policies treat as
	// known (a snapshot header's accounts).
	Accounts []string
	// At is when the read happened (default now).
	At time.Time
}

// Outcome is what observing a scope changed.
type Outcome struct {
	Scope     string
	Status    string // the read's: ok, partial, failed
	Resources int
	// Evaluated counts the resources evaluated: the changed and new ones, or all of them
	// when the scope was due a full evaluation (Full).
	Evaluated int
	Full      bool
	// Deleted counts the resources a full read no longer lists.
	Deleted int
	// Opened and Resolved are the findings that began and ended; Unknown counts the open
	// findings that could not be judged (a failed scope, a failed evaluation).
	Opened   []findings.Finding
	Resolved []FindingState
	Unknown  int
	// EvalErrors are the evaluation's errors: their pairs' findings are unknown.
	EvalErrors []findings.EvalError
}

// Observe records one read of a scope. A failed read makes the scope's open findings
// unknown and changes nothing else: a scope that could not be read resolves nothing and
// deletes nothing. A partial read judges what it read; the resources it did not list are
// not deleted. Observing the same read twice changes nothing the second time.
func (r *Reconciler) Observe(ctx context.Context, ob Observation) (*Outcome, error) {
	sc := ob.Scope
	if sc.ID == "" {
		return nil, errors.New("observe a scope: no scope id")
	}
	at := ob.At
	if at.IsZero() {
		at = r.o.Now()
	}
	at = at.UTC()
	for i := range ob.Resources {
		if ob.Resources[i].Scope == "" {
			ob.Resources[i].Scope = sc.ID
		}
		if ob.Resources[i].Scope != sc.ID {
			return nil, fmt.Errorf("observe scope %s: resource %s belongs to scope %s", sc.ID, ob.Resources[i].UID, ob.Resources[i].Scope)
		}
	}
	out := &Outcome{Scope: sc.ID, Status: sc.Status, Resources: len(ob.Resources)}
	if sc.Status == snapshot.ScopeFailed && len(ob.Resources) > 0 {
		return nil, fmt.Errorf("observe scope %s: a failed read lists %d resources", sc.ID, len(ob.Resources))
	}

	// What changed is decided, and evaluated, before the transaction: evaluation is the
	// slow part and holds no lock. The transaction then re-reads what it compares against,
	// so a concurrent observation of the same scope cannot be lost (the job queue keeps
	// one per scope at a time; this keeps it right if it does not).
	var prev map[string]string
	var state ScopeState
	var known bool
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if prev, err = resourceHashes(ctx, q, sc.ID); err != nil {
			return err
		}
		state, known, err = readScope(ctx, q, sc.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	ws, evalVersion := r.judging()
	full := !known || state.EvaluatedWith != evalVersion || at.Sub(state.FullAt) >= r.o.FullEvery
	type read struct {
		res  snapshot.Resource
		hash string
	}
	reads := make([]read, 0, len(ob.Resources))
	var changed []snapshot.Resource
	seen := make(map[string]bool, len(ob.Resources))
	var hs hasher
	for _, res := range ob.Resources {
		h, err := hs.sum(res)
		if err != nil {
			return nil, err
		}
		if seen[res.UID] {
			return nil, fmt.Errorf("observe scope %s: resource %s is listed twice", sc.ID, res.UID)
		}
		seen[res.UID] = true
		reads = append(reads, read{res, h})
		if full || prev[res.UID] != h {
			changed = append(changed, res)
		}
	}
	var deleted []string
	if sc.Complete() {
		for uid := range prev {
			if !seen[uid] {
				deleted = append(deleted, uid)
			}
		}
		slices.Sort(deleted)
	}
	var res *engine.Result
	errored := map[string]bool{}
	if sc.Status != snapshot.ScopeFailed {
		h := snapshot.Header{Version: 1, CollectedAt: at, Accounts: ob.Accounts, Scopes: []snapshot.Scope{sc}}
		if res, err = r.o.Engine.Evaluate(ctx, h, at, changed); err != nil {
			return nil, fmt.Errorf("evaluate scope %s: %w", sc.ID, err)
		}
		scan.ApplyWaivers(res.Findings, ws, at)
		for _, e := range res.EvalErrors {
			errored[e.Resource] = true
		}
		out.Evaluated, out.Full, out.EvalErrors = len(changed), full, res.EvalErrors
	}
	out.Deleted = len(deleted)

	evaluated := make(map[string]bool, len(changed))
	for _, c := range changed {
		evaluated[c.UID] = true
	}
	gone := make(map[string]bool, len(deleted))
	for _, uid := range deleted {
		gone[uid] = true
	}

	// Observations of different scopes touch different rows (and the audit log, which
	// serializes itself): on PostgreSQL they commit side by side.
	err = r.o.Store.InTxOn(ctx, sc.ID, func(tx *store.Tx) error {
		*out = Outcome{Scope: out.Scope, Status: out.Status, Resources: out.Resources, Evaluated: out.Evaluated, Full: out.Full,
			Deleted: out.Deleted, EvalErrors: out.EvalErrors}
		same, err := sameResourceHashes(ctx, tx, sc.ID, prev)
		if err != nil {
			return err
		}
		if !same {
			return errConcurrent
		}
		// A complete read that is not due in full judges only the findings of what it
		// evaluated or no longer lists, and the unknown ones it may vouch for again; the
		// others stand as they are, so they need not be read.
		var keep func(resource, status string) bool
		if !full && sc.Complete() {
			keep = func(resource, status string) bool {
				return status == findings.StatusUnknown || evaluated[resource] || gone[resource]
			}
		}
		old, err := activeFindings(ctx, tx, sc.ID, "", keep)
		if err != nil {
			return err
		}
		if sc.Status == snapshot.ScopeFailed {
			for _, fs := range old {
				if fs.Status == findings.StatusOpen {
					fs.Status = findings.StatusUnknown
					if err := putFinding(ctx, tx, fs); err != nil {
						return err
					}
				}
				if fs.Status == findings.StatusUnknown {
					out.Unknown++
				}
			}
			state.Scope, state.ReadAt = sc, at
			return putScope(ctx, tx, state)
		}
		for _, rd := range reads {
			if errored[rd.res.UID] {
				// Judged in part: kept without a hash, so the next read evaluates it again.
				rd.hash = ""
			}
			if prev[rd.res.UID] != rd.hash || errored[rd.res.UID] {
				data, err := json.Marshal(rd.res)
				if err != nil {
					return fmt.Errorf("encode resource %s: %w", rd.res.UID, err)
				}
				if err := putResource(ctx, tx, sc.ID, rd.res, rd.hash, data, at); err != nil {
					return err
				}
			}
		}
		for _, uid := range deleted {
			if err := deleteResource(ctx, tx, sc.ID, uid); err != nil {
				return err
			}
		}
		evs, err := r.judge(ctx, tx, judgement{scope: sc.ID, at: at, found: res.Findings, old: old,
			evaluated: evaluated, gone: gone, listed: seen, complete: sc.Complete(),
			notJudged: scan.NotJudged(r.o.Engine, res.EvalErrors)}, out)
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			if _, err := r.o.Log.AppendAll(ctx, tx, evs); err != nil {
				return fmt.Errorf("audit scope %s: %w", sc.ID, err)
			}
		}
		state.Scope, state.ReadAt = sc, at
		if sc.Complete() {
			state.OKAt = at
		}
		if full {
			state.EvaluatedWith, state.FullAt = evalVersion, at
		}
		return putScope(ctx, tx, state)
	})
	if errors.Is(err, errConcurrent) {
		return nil, fmt.Errorf("observe scope %s: %w", sc.ID, err)
	}
	if err != nil {
		return nil, err
	}
	r.o.Logger.Debug("scope observed", "scope", sc.ID, "status", sc.Status, "resources", out.Resources,
		"evaluated", out.Evaluated, "full", out.Full, "deleted", out.Deleted, "opened", len(out.Opened), "resolved", len(out.Resolved), "unknown", out.Unknown)
	return out, nil
}

// errConcurrent is the error of an observation that raced another of the same scope.
var errConcurrent = errors.New("another observation of the scope was recorded meanwhile: read it again")

// ErrConcurrent reports whether err is an observation that lost a race with another of
// the same scope; the caller reads the scope again.
func ErrConcurrent(err error) bool { return errors.Is(err, errConcurrent) }

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func findingEvent(actor, kind, scope string, f findings.Finding) audit.Event {
	return audit.Event{Actor: actor, Kind: kind, Subject: f.Fingerprint, Data: map[string]any{
		"scope": scope, "policy": f.Policy, "severity": f.Severity.String(), "resource": f.Resource,
		"account": f.Account, "region": f.Region, "message": f.Message,
	}}
}
