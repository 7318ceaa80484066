package reconcile_test

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// acme is the bundled organisation's snapshot, read once for every test.
var acmeSnapshot = sync.OnceValues(func() (acmeData, error) {
	f, err := os.Open(filepath.Join("..", "fixtures", "acme", "snapshot.json"))
	if err != nil {
		return acmeData{}, err
	}
	defer f.Close()
	h, rs, err := snapshot.ReadAll(f, "snapshot.json")
	return acmeData{h, rs}, err
})

type acmeData struct {
	h  snapshot.Header
	rs []snapshot.Resource
}

func acme() (snapshot.Header, []snapshot.Resource, error) {
	d, err := acmeSnapshot()
	return d.h, d.rs, err
}

// pack is the built-in policy pack, compiled once.
var pack = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
})

// env is one test's store, audit log and reconciler, with a clock the test moves.
type env struct {
	t   *testing.T
	st  *store.Store
	log *audit.Log
	r   *reconcile.Reconciler
	h   snapshot.Header

	mu  sync.Mutex
	now time.Time
}

func newEnv(t *testing.T, dsn string, o reconcile.Options) *env {
	t.Helper()
	h, _, err := acme()
	if err != nil {
		t.Fatal(err)
	}
	eng, err := pack()
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, st: storetest.Open(t, dsn), h: h, now: h.CollectedAt.Add(time.Hour)}
	e.log = audit.New(e.st, audit.Options{Now: e.clock})
	o.Store, o.Log, o.Engine, o.Now = e.st, e.log, eng, e.clock
	e.r = reconcile.New(o)
	return e
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

func (e *env) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = e.now.Add(d)
}

// read is the scope's part of the acme snapshot, as a read of it would return it.
func (e *env) read(scope string) reconcile.Observation {
	e.t.Helper()
	_, rs, _ := acme()
	sc, ok := e.h.ScopeByID(scope)
	if !ok {
		e.t.Fatalf("acme has no scope %s", scope)
	}
	ob := reconcile.Observation{Scope: sc, Accounts: e.h.Accounts}
	for _, r := range rs {
		if r.Scope == scope {
			ob.Resources = append(ob.Resources, r)
		}
	}
	return ob
}

func (e *env) observe(ob reconcile.Observation) *reconcile.Outcome {
	e.t.Helper()
	out, err := e.r.Observe(context.Background(), ob)
	if err != nil {
		e.t.Fatalf("observe %s: %v", ob.Scope.ID, err)
	}
	return out
}

// statuses counts the scope's findings that are not resolved by status.
func (e *env) statuses(scope string) map[string]int {
	e.t.Helper()
	fs, err := e.r.Findings(context.Background(), scope)
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, f := range fs {
		out[f.Status]++
	}
	return out
}

// audited counts the audit log's entries of kind.
func (e *env) audited(kind string) int {
	e.t.Helper()
	es, err := e.log.EntriesOfKind(context.Background(), kind)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(es)
}

// scanFindings is what warden scan finds in the scope of ob, scanning the whole acme
// snapshot at the env's time: the reference the daemon must agree with.
func scanFindings(t *testing.T, e *env, ob reconcile.Observation) []findings.Finding {
	t.Helper()
	eng, _ := pack()
	f, err := os.Open(filepath.Join("..", "fixtures", "acme", "snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := eng.Scan(context.Background(), snapshot.NewReader(f, "snapshot.json"), engine.Options{Now: e.clock()})
	if err != nil {
		t.Fatal(err)
	}
	var out []findings.Finding
	for _, f := range res.Findings {
		if f.Scope == ob.Scope.ID {
			out = append(out, f)
		}
	}
	return out
}

func fingerprints(fs []findings.Finding) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Fingerprint
	}
	slices.Sort(out)
	return out
}

func verifyAudit(t *testing.T, e *env) {
	t.Helper()
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := audit.New(e.st, audit.Options{Signer: signer, Now: e.clock})
	if _, err := log.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Verify(context.Background(), verifier); err != nil {
		t.Fatalf("audit verify: %v", err)
	}
}

// deactivated is the access key with this id made Inactive, in a copy of the read.
func deactivated(t *testing.T, ob reconcile.Observation, keyID string) reconcile.Observation {
	t.Helper()
	out := ob
	out.Resources = slices.Clone(ob.Resources)
	for i, r := range out.Resources {
		if r.Type == "aws.iam.access_key" && r.Attributes["access_key_id"] == keyID {
			attrs := maps.Clone(r.Attributes)
			attrs["status"] = "Inactive"
			out.Resources[i].Attributes = attrs
			return out
		}
	}
	t.Fatalf("no access key %s in the read", keyID)
	return out
}

const (
	iamScope = "aws/111111111111/iam"
	oldKey   = "AKIAJCMJL3DFEHCEV2RP" // old and unused: WARDEN-AWS-IAM-007 and -008
)

// The first read of a scope evaluates all of it and opens its findings, as many as
// warden scan finds there; reading it again unchanged evaluates nothing and changes
// nothing; one resource changed is the only one evaluated.
func TestObserve_evaluatesOnlyWhatChanged(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, dsn(t), reconcile.Options{})
			ob := e.read(iamScope)
			first := e.observe(ob)
			want := scanFindings(t, e, ob)
			if !first.Full || first.Evaluated != len(ob.Resources) || len(first.Opened) != len(want) || len(want) == 0 {
				t.Fatalf("first read: full %v, %d of %d evaluated, %d opened; warden scan finds %d", first.Full, first.Evaluated, len(ob.Resources), len(first.Opened), len(want))
			}
			if got := fingerprints(first.Opened); !slices.Equal(got, fingerprints(want)) {
				t.Errorf("opened %v, warden scan finds %v", got, fingerprints(want))
			}
			if n := e.audited(audit.KindFindingOpened); n != len(want) {
				t.Errorf("%d finding.opened entries, want %d", n, len(want))
			}

			e.advance(5 * time.Minute)
			again := e.observe(e.read(iamScope))
			if again.Full || again.Evaluated != 0 || len(again.Opened) != 0 || len(again.Resolved) != 0 || again.Unknown != 0 {
				t.Errorf("the same read again: %+v, want nothing evaluated or changed", again)
			}

			// Deactivate an old access key: only that resource is evaluated, and its
			// findings (old, unused) resolved.
			ob = deactivated(t, e.read(iamScope), oldKey)
			e.advance(5 * time.Minute)
			changed := e.observe(ob)
			if changed.Evaluated != 1 {
				t.Errorf("%d resources evaluated after one changed, want 1", changed.Evaluated)
			}
			if len(changed.Resolved) == 0 || len(changed.Opened) != 0 {
				t.Errorf("after deactivating %s: %d resolved, %d opened; want its findings resolved, none opened", oldKey, len(changed.Resolved), len(changed.Opened))
			}
			for _, f := range changed.Resolved {
				if !strings.Contains(f.Finding.Resource, oldKey) {
					t.Errorf("resolved %s on %s, a resource that did not change", f.Finding.Policy, f.Finding.Resource)
				}
			}
			for _, f := range changed.Resolved {
				if got := f.ResolvedAt.Sub(f.OpenedAt); got != 10*time.Minute {
					t.Errorf("%s open for %v, want 10m", f.Finding.Fingerprint, got)
				}
			}
			if n := e.audited(audit.KindFindingResolved); n != len(changed.Resolved) {
				t.Errorf("%d finding.resolved entries, want %d", n, len(changed.Resolved))
			}
			verifyAudit(t, e)
		})
	}
}

// A failed read makes the scope's open findings unknown and forgets no resource; the next
// full read of the same state finds them open again without evaluating anything or
// opening anything anew.
func TestObserve_failedReadResolvesNothing(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, dsn(t), reconcile.Options{})
			first := e.observe(e.read(iamScope))
			open := len(first.Opened)
			failed := e.read(iamScope)
			failed.Scope.Status, failed.Scope.Error, failed.Resources = snapshot.ScopeFailed, "AccessDenied: iam:GetAccountAuthorizationDetails", nil
			e.advance(time.Minute)
			out := e.observe(failed)
			if out.Unknown != open || len(out.Resolved) != 0 || out.Evaluated != 0 || out.Deleted != 0 {
				t.Errorf("failed read: %+v; want %d unknown, nothing resolved, evaluated or deleted", out, open)
			}
			if got := e.statuses(iamScope); got[findings.StatusUnknown] != open || got[findings.StatusOpen] != 0 {
				t.Errorf("statuses after a failed read: %v", got)
			}
			st, ok, err := e.r.Scope(context.Background(), iamScope)
			if err != nil || !ok || st.Scope.Status != snapshot.ScopeFailed || !st.OKAt.Before(st.ReadAt) {
				t.Errorf("scope state after a failed read: %+v %v %v", st, ok, err)
			}

			e.advance(time.Minute)
			back := e.observe(e.read(iamScope))
			if back.Evaluated != 0 || len(back.Opened) != 0 || len(back.Resolved) != 0 || back.Unknown != 0 {
				t.Errorf("full read after the failure: %+v; want nothing evaluated, opened or resolved", back)
			}
			if got := e.statuses(iamScope); got[findings.StatusOpen] != open {
				t.Errorf("statuses after the full read: %v, want %d open", got, open)
			}
			if n := e.audited(audit.KindFindingOpened); n != open {
				t.Errorf("%d finding.opened entries, want %d: a failed read reopens nothing", n, open)
			}
		})
	}
}

// A resource a full read no longer lists is gone: its findings resolve. One a partial
// read does not list is unknown: its findings are neither confirmed nor resolved.
func TestObserve_missingResources(t *testing.T) {
	for _, c := range []struct {
		status                  string
		deleted, unknown, gone  int
		wantResolvedOnTheMissed bool
	}{
		{snapshot.ScopeOK, 1, 0, 1, true},
		{snapshot.ScopePartial, 0, 2, 0, false},
	} {
		t.Run(c.status, func(t *testing.T) {
			e := newEnv(t, storetest.Backends(t)["sqlite"](t), reconcile.Options{})
			e.observe(e.read(iamScope))
			ob := e.read(iamScope)
			ob.Scope.Status = c.status
			ob.Resources = slices.DeleteFunc(slices.Clone(ob.Resources), func(r snapshot.Resource) bool {
				return r.Type == "aws.iam.access_key" && r.Attributes["access_key_id"] == oldKey
			})
			e.advance(time.Minute)
			out := e.observe(ob)
			if out.Deleted != c.deleted || out.Unknown != c.unknown || (len(out.Resolved) == 2) != c.wantResolvedOnTheMissed {
				t.Errorf("%s read without key %s: %+v", c.status, oldKey, out)
			}
			for _, f := range out.Resolved {
				if !strings.Contains(f.Finding.Resource, oldKey) {
					t.Errorf("resolved %s on %s", f.Finding.Policy, f.Finding.Resource)
				}
			}
		})
	}
}

// A new policy pack or new settings (EvalVersion), and the passing of FullEvery, make
// the next read evaluate every resource of the scope: ages move on without a change.
func TestObserve_fullEvaluationWhenDue(t *testing.T) {
	dsn := storetest.Backends(t)["sqlite"](t)
	e := newEnv(t, dsn, reconcile.Options{EvalVersion: "pack-1", FullEvery: time.Hour})
	n := len(e.read(iamScope).Resources)
	steps := []struct {
		name    string
		advance time.Duration
		version string
		full    bool
	}{
		{"first read", 0, "pack-1", true},
		{"10 minutes later", 10 * time.Minute, "pack-1", false},
		{"an hour after the full one", 50 * time.Minute, "pack-1", true},
		{"a new pack", time.Minute, "pack-2", true},
		{"the new pack again", time.Minute, "pack-2", false},
	}
	for _, s := range steps {
		e.advance(s.advance)
		eng, _ := pack()
		e.r = reconcile.New(reconcile.Options{Store: e.st, Log: e.log, Engine: eng, Now: e.clock, EvalVersion: s.version, FullEvery: time.Hour})
		out := e.observe(e.read(iamScope))
		if out.Full != s.full || (s.full && out.Evaluated != n) || (!s.full && out.Evaluated != 0) {
			t.Errorf("%s: full %v, %d evaluated; want full %v", s.name, out.Full, out.Evaluated, s.full)
		}
		if len(out.Opened) != 0 && s.name != "first read" {
			t.Errorf("%s: %d findings opened again", s.name, len(out.Opened))
		}
	}
}

// The fixes of a scope are planned from its open findings and the resources as last
// read, as warden plan plans them from a snapshot; a scope last read in part plans
// notices only.
func TestReconciler_planOfAScope(t *testing.T) {
	e := newEnv(t, storetest.Backends(t)["sqlite"](t), reconcile.Options{})
	reg, err := builtin.New(builtin.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.r.Plan(ctx, iamScope, reconcile.PlanOptions{Registry: reg}); err == nil {
		t.Error("a plan of a scope never read: no error")
	}
	e.observe(e.read(iamScope))
	p, err := e.r.Plan(ctx, iamScope, reconcile.PlanOptions{Registry: reg, Gates: gates.Config{}, Accounts: e.h.Accounts})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) == 0 {
		t.Fatalf("no action planned for %s: notices %+v", iamScope, p.Notices)
	}
	for _, a := range p.Actions {
		if a.Account != "111111111111" {
			t.Errorf("action %s in account %s", a.ID, a.Account)
		}
	}
	if err := p.Check(); err != nil {
		t.Errorf("the plan does not check: %v", err)
	}

	partial := e.read(iamScope)
	partial.Scope.Status = snapshot.ScopePartial
	e.advance(time.Minute)
	e.observe(partial)
	p, err = e.r.Plan(ctx, iamScope, reconcile.PlanOptions{Registry: reg, Accounts: e.h.Accounts})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Actions) != 0 || len(p.Notices) == 0 {
		t.Errorf("after a partial read: %d actions, %d notices; want notices only", len(p.Actions), len(p.Notices))
	}
}
