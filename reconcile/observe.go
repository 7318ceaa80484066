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
	"github.com/warden-sec/warden/internal/urgency"
	"github.com/warden-sec/warden/reconcile/state"
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
	// Tape is the read's tape (collectors.Rereader), kept for the next read when the
	// read was complete and judged without error; nil: none.
	Tape []byte
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
	// Replayed says the read was a replay of the scope's last read that found every
	// answer as it was (ObserveUnchanged): nothing was compared or evaluated.
	Replayed bool
	// Deleted counts the resources a full read no longer lists.
	Deleted int
	// Opened and Resolved are the findings that began and ended; Unknown counts the open
	// findings that could not be judged (a failed scope, a failed evaluation).
	Opened   []findings.Finding
	Resolved []state.Finding
	Unknown  int
	// EvalErrors are the evaluation's errors: their pairs' findings are unknown.
	EvalErrors []findings.EvalError
}

// Observe records one read of a scope. A failed read makes the scope's open findings
// unknown and changes nothing else: a scope that could not be read resolves nothing and
// deletes nothing. A partial read judges what it read; the resources it did not list are
// not deleted. Observing the same read twice changes nothing the second time.
//
// What changed is decided, and evaluated, before the transaction: evaluation is the slow
// part and holds no lock. The transaction then re-reads what it compares against, so a
// concurrent observation of the same scope cannot be lost (the job queue keeps one per
// scope at a time; this keeps it right if it does not).
func (r *Reconciler) Observe(ctx context.Context, ob Observation) (*Outcome, error) {
	at, err := r.checkObservation(&ob)
	if err != nil {
		return nil, err
	}
	p, err := r.readPrevious(ctx, ob.Scope, at)
	if err != nil {
		return nil, err
	}
	p.tape = ob.Tape
	if err := p.compare(ctx, ob.Resources); err != nil {
		return nil, err
	}
	if err := r.evaluate(ctx, p, ob.Accounts); err != nil {
		return nil, err
	}
	if err := p.encode(ctx); err != nil {
		return nil, err
	}
	// A read that is not urgent takes the store's writer only when no urgent work runs
	// (urgency.Yield): on SQLite an event's transaction would wait for it to commit.
	if err := urgency.Yield(ctx); err != nil {
		return nil, err
	}
	out := &Outcome{}
	// Observations of different scopes touch different rows (and the audit log, which
	// serializes itself): on PostgreSQL they commit side by side.
	err = r.o.Store.InTxOn(ctx, p.sc.ID, func(tx *store.Tx) error {
		*out = p.outcome()
		return r.record(ctx, tx, p, out)
	})
	if errors.Is(err, errConcurrent) {
		return nil, fmt.Errorf("observe scope %s: %w", p.sc.ID, err)
	}
	if err != nil {
		return nil, err
	}
	r.o.Logger.Debug("scope observed", "scope", p.sc.ID, "status", p.sc.Status, "resources", out.Resources,
		"evaluated", out.Evaluated, "full", out.Full, "deleted", out.Deleted, "opened", len(out.Opened), "resolved", len(out.Resolved), "unknown", out.Unknown)
	return out, nil
}

// observed is one read of a scope on its way to the store: what the store held of the
// scope before it, what changed, and what evaluating that found.
type observed struct {
	sc snapshot.Scope
	at time.Time
	// prev are the stored hashes of the scope's resources by uid, known whether the
	// scope was read before, st its stored state.
	prev  map[string]string
	st    state.Scope
	known bool
	// full says every resource is evaluated, not only the changed ones: the scope is
	// new, judged with another version, or due (FullEvery); evalVersion is the version
	// judging now, ws the waivers.
	full        bool
	evalVersion string
	ws          *waivers.Set
	// reads are the resources read with their hashes, in the read's order; changed those
	// to evaluate; listed the uids read; deleted (sorted) those a complete read no longer
	// lists, gone the same as a set; evaluated the uids of changed.
	reads        []hashedRead
	changed      []snapshot.Resource
	deleted      []string
	listed, gone map[string]bool
	evaluated    map[string]bool
	res          *engine.Result  // nil for a failed read
	errored      map[string]bool // resources whose evaluation failed in part
	tape         []byte          // the read's tape, if any
}

// hashedRead is one resource as read, with its hash.
type hashedRead struct {
	res  snapshot.Resource
	hash string
	data []byte // the resource as stored, encoded before the transaction (encode)
}

// checkObservation refuses an observation that cannot be recorded (no scope id, a
// resource of another scope, a failed read that lists resources), gives its resources
// their scope, and returns its time in UTC (now by default).
func (r *Reconciler) checkObservation(ob *Observation) (time.Time, error) {
	sc := ob.Scope
	if sc.ID == "" {
		return time.Time{}, errors.New("observe a scope: no scope id")
	}
	at := ob.At
	if at.IsZero() {
		at = r.o.Now()
	}
	for i := range ob.Resources {
		if ob.Resources[i].Scope == "" {
			ob.Resources[i].Scope = sc.ID
		}
		if ob.Resources[i].Scope != sc.ID {
			return time.Time{}, fmt.Errorf("observe scope %s: resource %s belongs to scope %s", sc.ID, ob.Resources[i].UID, ob.Resources[i].Scope)
		}
	}
	if sc.Status == snapshot.ScopeFailed && len(ob.Resources) > 0 {
		return time.Time{}, fmt.Errorf("observe scope %s: a failed read lists %d resources", sc.ID, len(ob.Resources))
	}
	return at.UTC(), nil
}

// readPrevious reads what the store holds of the scope (its resources' hashes and its
// state) and decides whether this read evaluates it in full.
func (r *Reconciler) readPrevious(ctx context.Context, sc snapshot.Scope, at time.Time) (*observed, error) {
	p := &observed{sc: sc, at: at}
	err := r.o.Store.Read(ctx, func(q *store.Reader) error {
		var err error
		if p.prev, err = state.ResourceHashes(ctx, q, sc.ID); err != nil {
			return err
		}
		p.st, p.known, err = state.ReadScope(ctx, q, sc.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.ws, p.evalVersion = r.judging()
	p.full = !p.known || p.st.EvaluatedWith != p.evalVersion || at.Sub(p.st.FullAt) >= r.o.FullEvery
	return p, nil
}

// compare hashes each resource read and sorts them against the stored hashes: changed
// (or all, when full) to evaluate, and, for a complete read, those no longer listed.
func (p *observed) compare(ctx context.Context, resources []snapshot.Resource) error {
	p.reads = make([]hashedRead, 0, len(resources))
	p.listed = make(map[string]bool, len(resources))
	var hs hasher
	for i, res := range resources {
		if err := urgency.YieldEvery(ctx, i, yieldEvery); err != nil {
			return err
		}
		h, err := hs.sum(res)
		if err != nil {
			return err
		}
		if p.listed[res.UID] {
			return fmt.Errorf("observe scope %s: resource %s is listed twice", p.sc.ID, res.UID)
		}
		p.listed[res.UID] = true
		p.reads = append(p.reads, hashedRead{res: res, hash: h})
		if p.full || p.prev[res.UID] != h {
			p.changed = append(p.changed, res)
		}
	}
	if p.sc.Complete() {
		for uid := range p.prev {
			if !p.listed[uid] {
				p.deleted = append(p.deleted, uid)
			}
		}
		slices.Sort(p.deleted)
	}
	p.evaluated = make(map[string]bool, len(p.changed))
	for _, c := range p.changed {
		p.evaluated[c.UID] = true
	}
	p.gone = make(map[string]bool, len(p.deleted))
	for _, uid := range p.deleted {
		p.gone[uid] = true
	}
	return nil
}

// evaluate runs the policies on the changed resources of a read that did not fail, and
// applies the waivers to what they find.
func (r *Reconciler) evaluate(ctx context.Context, p *observed, accounts []string) error {
	p.errored = map[string]bool{}
	if p.sc.Status == snapshot.ScopeFailed {
		return nil
	}
	h := snapshot.Header{Version: 1, CollectedAt: p.at, Accounts: accounts, Scopes: []snapshot.Scope{p.sc}}
	res, err := r.o.Engine.Evaluate(ctx, h, p.at, p.changed)
	if err != nil {
		return fmt.Errorf("evaluate scope %s: %w", p.sc.ID, err)
	}
	scan.ApplyWaivers(res.Findings, p.ws, p.at)
	for _, e := range res.EvalErrors {
		p.errored[e.Resource] = true
	}
	p.res = res
	return nil
}

// outcome is the Outcome of the read before its findings are judged.
func (p *observed) outcome() Outcome {
	out := Outcome{Scope: p.sc.ID, Status: p.sc.Status, Resources: len(p.reads), Deleted: len(p.deleted)}
	if p.res != nil {
		out.Evaluated, out.Full, out.EvalErrors = len(p.changed), p.full, p.res.EvalErrors
	}
	return out
}

// record writes the read in tx, if the scope's resources are still as readPrevious
// read them: the resources that changed, the findings' lives with their audit entries,
// and the scope's state. A failed read only makes the scope's open findings unknown.
func (r *Reconciler) record(ctx context.Context, tx *store.Tx, p *observed, out *Outcome) error {
	same, err := state.SameResourceHashes(ctx, tx, p.sc.ID, p.prev)
	if err != nil {
		return err
	}
	if !same {
		return errConcurrent
	}
	old, err := state.ActiveFindings(ctx, tx, p.sc.ID, "", p.inReach())
	if err != nil {
		return err
	}
	if p.sc.Status == snapshot.ScopeFailed {
		if err := markUnknown(ctx, tx, old, out); err != nil {
			return err
		}
		p.st.Scope, p.st.ReadAt = p.sc, p.at
		if err := state.PutScope(ctx, tx, p.st); err != nil {
			return err
		}
		return state.PutTape(ctx, tx, p.sc.ID, nil)
	}
	if err := p.saveResources(ctx, tx); err != nil {
		return err
	}
	evs, err := r.judge(ctx, tx, judgement{scope: p.sc.ID, at: p.at, found: p.res.Findings, old: old,
		evaluated: p.evaluated, gone: p.gone, listed: p.listed, complete: p.sc.Complete(),
		notJudged: scan.NotJudged(r.o.Engine, p.res.EvalErrors)}, out)
	if err != nil {
		return err
	}
	if len(evs) > 0 {
		if _, err := r.o.Log.AppendAll(ctx, tx, evs); err != nil {
			return fmt.Errorf("audit scope %s: %w", p.sc.ID, err)
		}
	}
	p.st.Scope, p.st.ReadAt = p.sc, p.at
	if p.sc.Complete() {
		p.st.OKAt = p.at
	}
	if p.full {
		p.st.EvaluatedWith, p.st.FullAt = p.evalVersion, p.at
	}
	if err := state.PutScope(ctx, tx, p.st); err != nil {
		return err
	}
	// A tape stands for this read only if the store now holds all of it, judged: a
	// partial read, or one with resources whose evaluation failed (kept without a hash,
	// to be evaluated again), is read again in full next time.
	var tape []byte
	if p.sc.Complete() && len(p.errored) == 0 {
		tape = p.tape
	}
	return state.PutTape(ctx, tx, p.sc.ID, tape)
}

// inReach says which of the scope's active findings the read judges, nil for all. A
// complete read that is not due in full judges only the findings of what it evaluated
// or no longer lists, and the unknown ones it may vouch for again; the others stand as
// they are, so they need not be read.
func (p *observed) inReach() func(resource, status string) bool {
	if p.full || !p.sc.Complete() {
		return nil
	}
	return func(resource, status string) bool {
		return status == findings.StatusUnknown || p.evaluated[resource] || p.gone[resource]
	}
}

// markUnknown makes the open findings of a scope that failed to read unknown, and counts
// the unknown ones in out.
func markUnknown(ctx context.Context, tx *store.Tx, old map[string]state.Finding, out *Outcome) error {
	var put []state.Finding
	for _, fp := range sortedKeys(old) {
		fs := old[fp]
		if fs.Status == findings.StatusOpen {
			fs.Status = findings.StatusUnknown
			put = append(put, fs)
		}
		if fs.Status == findings.StatusUnknown {
			out.Unknown++
		}
	}
	return state.PutFindings(ctx, tx, put)
}

// saveResources stores the resources whose hash changed (those judged in part without
// one, so the next read evaluates them again) and forgets those the read no longer lists.
func (p *observed) saveResources(ctx context.Context, tx *store.Tx) error {
	var ws []state.ResourceWrite
	for _, rd := range p.reads {
		if p.errored[rd.res.UID] {
			rd.hash = ""
		}
		if p.stores(rd) {
			ws = append(ws, state.ResourceWrite{Resource: rd.res, Data: rd.data, Hash: rd.hash})
		}
	}
	if err := state.PutResources(ctx, tx, p.sc.ID, ws, p.at); err != nil {
		return err
	}
	for _, uid := range p.deleted {
		if err := state.DeleteResource(ctx, tx, p.sc.ID, uid); err != nil {
			return err
		}
	}
	return nil
}

// stores reports whether the transaction writes rd's row: a resource that changed, or
// one a policy failed on (stored without a hash, so that the next read evaluates it).
func (p *observed) stores(rd hashedRead) bool {
	return p.prev[rd.res.UID] != rd.hash || p.errored[rd.res.UID]
}

// encode encodes the resources the transaction will store, before it: on SQLite the
// transaction holds the one writer, which an event's refresh may be waiting for, and a
// first read of a large scope spent a fifth of that time encoding.
func (p *observed) encode(ctx context.Context) error {
	for i := range p.reads {
		if err := urgency.YieldEvery(ctx, i, yieldEvery); err != nil {
			return err
		}
		rd := &p.reads[i]
		if !p.stores(*rd) {
			continue
		}
		data, err := json.Marshal(rd.res)
		if err != nil {
			return fmt.Errorf("encode resource %s: %w", rd.res.UID, err)
		}
		rd.data = data
	}
	return nil
}

// yieldEvery is how many resources a read hashes or encodes between its yields to
// urgent work: about a millisecond of a core.
const yieldEvery = 128

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
