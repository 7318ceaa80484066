package daemon

import (
	"context"
	"testing"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store/storetest"
)

// unstarted returns a daemon over e's world with one target, "aws", not started: the
// package's own tests call its workers and handlers directly.
func unstarted(t *testing.T, e *remediatetest.Env) *Daemon {
	t.Helper()
	rec := reconcile.New(reconcile.Options{Store: e.Store, Log: e.Log, Engine: e.Engine})
	d, err := New(context.Background(), Options{Store: e.Store, Log: e.Log, Reconciler: rec, Machine: e.Machine("warden", remediate.Limits{}),
		Plan: reconcile.PlanOptions{Registry: e.Registry, Gates: e.Gates}, Targets: []Target{{Name: "aws", Collector: e.Reader, Reader: e.Reader}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.close)
	return d
}

// unstartedOnSQLite is unstarted over a world of one open group on SQLite, low risks
// approved automatically: for the tests of the daemon's own mechanics, which the
// database does not change.
func unstartedOnSQLite(t *testing.T) *Daemon {
	t.Helper()
	e := remediatetest.Start(t, storetest.Backends(t)["sqlite"](t), remediatetest.World(1), gates.Config{Auto: []findings.Risk{findings.RiskLow}}, remediatetest.Options{})
	return unstarted(t, e)
}
