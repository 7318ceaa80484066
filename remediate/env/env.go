// Package env opens the environment the remediation use cases share (warden plan,
// apply, rollback, demo and serve): the config and its compiled policies, the
// remediators, the live targets and their clients, and, for the commands that change
// anything, the store, its audit log and its approval gate.
package env

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

// Options say what to open.
type Options struct {
	// Config is the loaded config (an empty one without a file).
	Config *config.Config
	// Policies choose the policies beyond the config's; their catalog is the built-in
	// remediators', set by Open.
	Policies config.PolicyOptions
	// Targets are the live targets: where plans re-read resources and fixes are made.
	Targets collect.Targets
	// Sim, when set, is a world file served by an in-process simulator the targets are
	// pointed at.
	Sim string
	// SimNow, when set, starts the simulator's clock at this time (collect.StartSimulatorAt).
	SimNow time.Time
	// DB is the store's DSN; empty opens none (a plan changes nothing, so needs none).
	DB string
	// DryRun opens DB only if it exists: a dry run creates nothing. Without it, an empty
	// store in memory stands in, and Env.NoDB says so.
	DryRun bool
	// Action, with DB, is the recorded action a rollback undoes: the cloud its target
	// lives in is opened though Targets do not name it (collect.Targets.Reach).
	Action string
	// Actor is who requests the fixes.
	Actor  string
	Logger *slog.Logger
}

// Env is everything plan and apply work with. Close it when done.
type Env struct {
	Config   *config.Config
	Engine   *engine.Engine
	Registry *remediators.Registry
	Targets  collect.Targets
	Clouds   *collect.Clouds
	// Store, Log and Gate are nil unless Options.DB was given.
	Store *store.Store
	Log   *audit.Log
	Gate  *gates.Gate
	Actor string
	// Sim is the in-process simulator of Options.Sim, nil without one.
	Sim *collect.Simulator
	// NoDB, after a dry run's Open, says that Options.DB does not exist yet and what that
	// means for the dry run; empty otherwise.
	NoDB string
}

// Open loads the policies against the remediators' catalog, connects to the clouds of
// the targets (behind the simulator when one is asked for) and opens the store.
func Open(ctx context.Context, o Options) (*Env, error) {
	e := &Env{Config: o.Config, Targets: o.Targets, Actor: o.Actor}
	// The catalog is known before any client exists: Targets needs no cloud.
	planning, err := builtin.Registry(nil, nil)
	if err != nil {
		return nil, err
	}
	po := o.Policies
	po.Catalog, po.Logger = planning.Catalog(), o.Logger
	if e.Engine, err = e.Config.Engine(ctx, po); err != nil {
		return nil, err
	}
	if o.Sim != "" {
		if e.Sim, err = collect.StartSimulatorAt(o.Sim, o.SimNow, o.Logger); err != nil {
			return nil, err
		}
		e.Targets = e.Sim.Target(e.Targets)
	}
	if o.DB != "" {
		if err := e.openStore(ctx, o); err != nil {
			e.Close()
			return nil, err
		}
	}
	if o.Action != "" && e.Store != nil {
		if err := e.reachAction(ctx, o.Action); err != nil {
			e.Close()
			return nil, err
		}
	}
	if e.Clouds, err = collect.Open(ctx, e.Targets); err != nil {
		e.Close()
		return nil, err
	}
	// certs: decides where a renewal is delivered, so plans see it too; only commands
	// that keep a store can apply one, since it archives what it replaces there.
	deps := builtin.Deps{AWS: e.Clouds.Sessions, GCP: e.Clouds.GCP, Rotation: e.Config.Rotation, Certs: e.Config.Certs, Store: e.Store, Logger: o.Logger}
	if e.Registry, err = builtin.New(deps); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// openStore opens the store of o.DB, its audit log and its gate. A dry run does not
// create a database that is missing: an empty one in memory stands in for it.
func (e *Env) openStore(ctx context.Context, o Options) error {
	open := store.Open
	if o.DryRun {
		open = store.OpenExisting
	}
	st, err := open(ctx, o.DB)
	if o.DryRun && errors.Is(err, fs.ErrNotExist) {
		e.NoDB = fmt.Sprintf("no database at %s yet: this dry run reads no approvals or earlier runs, and creates none; apply --confirm creates it and records the actions there", o.DB)
		st, err = store.Open(ctx, ":memory:")
	}
	if err != nil {
		return err
	}
	e.Store = st
	e.Log = audit.New(e.Store, audit.Options{Now: time.Now})
	e.Gate = gates.New(e.Store, e.Log, e.Config.Gates, time.Now)
	return nil
}

// reachAction adds to the targets the cloud the recorded action id acts on, so that a
// rollback reaches it without the flags that name it. An action not recorded, or with
// no way back, is left to the rollback to report.
func (e *Env) reachAction(ctx context.Context, id string) error {
	r, err := remediate.New(remediate.Options{Store: e.Store}).Action(ctx, id)
	if err != nil || r == nil || !r.Rollback.Possible {
		return err
	}
	if e.Targets, err = e.Targets.Reach(r.Target); err != nil {
		return fmt.Errorf("rollback %s: %w", id, err)
	}
	return nil
}

// Notice writes to w what the caller should know of the environment opened: that a dry
// run found no database (NoDB), and that decisions are unchecked names (approvers
// listed without gates.signers). It writes nothing otherwise.
func (e *Env) Notice(w io.Writer) {
	if e.NoDB != "" {
		fmt.Fprintln(w, e.NoDB)
	}
	if msg := e.Config.Gates.UncheckedWarning(); msg != "" {
		fmt.Fprintln(w, msg)
	}
}

// MachineOptions are the remediation machine's options over the environment, applying
// as its actor and logging to log; the caller adds its limits.
func (e *Env) MachineOptions(log *slog.Logger) remediate.Options {
	return remediate.Options{Store: e.Store, Log: e.Log, Gate: e.Gate, Gates: e.Config.Gates, Registry: e.Registry,
		Observer: remediate.Readers(e.Clouds.Readers), Engine: e.Engine, Actor: e.Actor, Logger: log,
		Versions: scan.VersionEvents(e.Engine, e.Config.File, e.Config.Version)}
}

// Close closes the clients, the store and the simulator.
func (e *Env) Close() {
	if e.Clouds != nil {
		e.Clouds.Close()
	}
	if e.Store != nil {
		_ = e.Store.Close()
	}
	if e.Sim != nil {
		_ = e.Sim.Close()
	}
}
