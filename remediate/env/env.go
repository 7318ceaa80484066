// Package env opens the environment the remediation use cases share (warden plan,
// apply, rollback, demo and serve): the config and its compiled policies, the
// remediators, the live targets and their clients, and, for the commands that change
// anything, the store, its audit log and its approval gate.
package env

import (
	"context"
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
	// DB is the store's DSN; empty opens none (a plan changes nothing, so needs none).
	DB string
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
		if e.Sim, err = collect.StartSimulator(o.Sim, o.Logger); err != nil {
			return nil, err
		}
		e.Targets = e.Sim.Target(e.Targets)
	}
	if e.Clouds, err = collect.Open(ctx, e.Targets); err != nil {
		e.Close()
		return nil, err
	}
	// certs: decides where a renewal is delivered, so plans see it too; only commands
	// that keep a store can apply one, since it archives what it replaces there.
	deps := builtin.Deps{AWS: e.Clouds.Sessions, GCP: e.Clouds.GCP, Rotation: e.Config.Rotation, Certs: e.Config.Certs, Logger: o.Logger}
	if o.DB != "" {
		if e.Store, err = store.Open(ctx, o.DB); err != nil {
			e.Close()
			return nil, err
		}
		e.Log = audit.New(e.Store, audit.Options{Now: time.Now})
		e.Gate = gates.New(e.Store, e.Log, e.Config.Gates, time.Now)
		deps.Store = e.Store
	}
	if e.Registry, err = builtin.New(deps); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
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
