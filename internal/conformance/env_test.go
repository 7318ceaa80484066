package conformance_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// engineOf is the built-in policy pack checked against the built-in fixes, as warden
// loads it.
func engineOf(t *testing.T) *engine.Engine {
	t.Helper()
	return remediatetest.Engine(t, registry(t, nil), nil)
}

// sessions are warden's AWS sessions from the standard chain (AWS_ENDPOINT_URL), with
// short backoffs.
func sessions(t *testing.T) *awsapi.Sessions {
	t.Helper()
	s, err := awsapi.NewSessions(context.Background(), awsapi.Options{MaxAttempts: 2, BaseBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func registry(t *testing.T, s *awsapi.Sessions) *remediators.Registry {
	t.Helper()
	reg, err := builtin.New(builtin.Deps{AWS: s})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// fixer is what `warden plan` and `warden apply` open: sessions, the built-in fixes, the
// pack, a store with its audit log and an approval gate (bob and carol approve).
type fixer struct {
	Sessions *awsapi.Sessions
	Registry *remediators.Registry
	Engine   *engine.Engine
	Store    *store.Store
	Log      *audit.Log
	Gates    gates.Config
	Gate     *gates.Gate
}

func newFixer(t *testing.T) *fixer {
	t.Helper()
	s := sessions(t)
	reg := registry(t, s)
	st := storetest.Open(t, filepath.Join(t.TempDir(), "warden.db"))
	f := &fixer{Sessions: s, Registry: reg, Engine: remediatetest.Engine(t, reg, nil), Store: st,
		Gates: gates.Config{Approvers: []string{"bob", "carol"}, UncheckedNames: true}}
	f.Log = audit.New(st, audit.Options{})
	f.Gate = gates.New(st, f.Log, f.Gates, time.Now)
	return f
}

// plan collects the account, scans it and plans its fixes as actor, as `warden plan
// --aws` does.
func (f *fixer) plan(t *testing.T, actor string) *remediate.Plan {
	t.Helper()
	p, err := remediate.ScanAndPlan(context.Background(), remediate.ScanRequest{Collectors: awsCollectors(t),
		Scan: scan.Request{Engine: f.Engine}, Plan: remediate.ScanPlanOptions{Registry: f.Registry, Gates: f.Gates, Actor: actor}})
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	return p
}

// machine is the remediation machine acting as actor, observing through warden's
// collector.
func (f *fixer) machine(t *testing.T, actor string) *remediate.Machine {
	t.Helper()
	var obs remediate.Readers
	for _, c := range awsCollectors(t) {
		if r, ok := c.(collectors.Reader); ok {
			obs = append(obs, r)
		}
	}
	return remediate.New(remediate.Options{Store: f.Store, Log: f.Log, Gate: f.Gate, Gates: f.Gates, Registry: f.Registry,
		Observer: obs, Engine: f.Engine, Actor: actor})
}

// verifyAudit signs a checkpoint and verifies the log against it, as `warden audit
// verify` does.
func (f *fixer) verifyAudit(t *testing.T) audit.Report {
	t.Helper()
	signer, verifier, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := audit.New(f.Store, audit.Options{Signer: signer})
	if _, err := log.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := log.Verify(context.Background(), verifier)
	if err != nil {
		t.Fatalf("audit verify: %v", err)
	}
	return rep
}
