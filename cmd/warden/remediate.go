package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/valyala/fastjson"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/collectors"
	awscollector "github.com/warden-sec/warden/collectors/aws"
	gcpcollector "github.com/warden-sec/warden/collectors/gcp"
	"github.com/warden-sec/warden/collectors/tlsprobe"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/awsapi"
	"github.com/warden-sec/warden/internal/gcpapi"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// remediationFlags are shared by plan and apply: where the findings come from (a
// snapshot or live targets), the policies, the waivers and the database.
type remediationFlags struct {
	pf         policyFlags
	tf         targetFlags
	snapPath   string
	waiverFile string
	dbPath     string
	nowFlag    string
}

func (rf *remediationFlags) register(cmd *cobra.Command) {
	rf.pf.register(cmd)
	rf.tf.register(cmd)
	f := cmd.Flags()
	f.StringVarP(&rf.snapPath, "snapshot", "s", "", "plan from this snapshot file instead of collecting the targets")
	f.StringVar(&rf.waiverFile, "waivers", "", "YAML file of waivers: waived findings are not fixed")
	f.StringVar(&rf.dbPath, "db", "", "warden's database (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)")
	f.StringVar(&rf.nowFlag, "now", "", "evaluate as of this RFC 3339 time instead of the snapshot's collected_at")
}

// clouds are the live clients of one run: the sessions remediators and verification
// share, and the collectors that read one resource again.
type clouds struct {
	sessions *awsapi.Sessions
	gcp      *gcpapi.Clients
	readers  remediate.Readers
	close    func()
}

// openClouds connects to the clouds the targets name. Nothing is called yet.
func openClouds(ctx context.Context, t collect.Targets) (*clouds, error) {
	c := &clouds{close: func() {}}
	if t.AWS != nil {
		opts := awsapi.Options{Endpoint: t.AWS.Endpoint, AWS: t.AWSConfig, RateLimits: t.AWS.RateLimits, OrgRole: t.AWS.OrgRole}
		s, err := awsapi.NewSessions(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("connect to AWS: %w", err)
		}
		c.sessions = s
		c.readers = append(c.readers, awscollector.New(awscollector.Config{Sessions: s, Regions: t.AWS.Regions, Org: t.AWS.Org,
			OrgRole: t.AWS.OrgRole, Endpoint: t.AWS.Endpoint, AWS: t.AWSConfig, RateLimits: t.AWS.RateLimits}))
	}
	if t.GCP != nil {
		cl, err := gcpapi.New(ctx, gcpapi.Options{Endpoint: t.GCP.Endpoint, RateLimit: t.GCP.RateLimit})
		if err != nil {
			return nil, fmt.Errorf("connect to Google Cloud: %w", err)
		}
		c.gcp = cl
		gc := gcpcollector.New(gcpcollector.Config{Clients: cl, Projects: t.GCP.Projects, Endpoint: t.GCP.Endpoint, RateLimit: t.GCP.RateLimit})
		c.readers = append(c.readers, gc)
		c.close = func() { _ = gc.Close(); _ = cl.Close() }
	}
	// Endpoints are read again by probing them, whether or not they were listed: a
	// renewed certificate is verified on the endpoint that serves it.
	tlsTargets, err := t.TLSTargets()
	if err != nil {
		return nil, err
	}
	c.readers = append(c.readers, &tlsprobe.Collector{Targets: tlsTargets, Timeout: t.TLSTimeout})
	return c, nil
}

// remediation is everything plan and apply work with.
type remediation struct {
	cfg     *config.Config
	eng     *engine.Engine
	reg     *remediators.Registry
	targets collect.Targets
	clouds  *clouds
	st      *store.Store
	log     *audit.Log
	gate    *gates.Gate
	actor   string
	now     time.Time
	// sim is the in-process simulator of --sim, when the targets are simulated.
	sim  *collect.Simulator
	stop func()
}

func (r *remediation) Close() {
	if r.clouds != nil {
		r.clouds.close()
	}
	if r.st != nil {
		_ = r.st.Close()
	}
	if r.stop != nil {
		r.stop()
	}
}

// openRemediation loads the policies against the registry's catalog, connects to the
// clouds of the targets and opens the database.
func (a *app) openRemediation(cmd *cobra.Command, rf *remediationFlags, needDB bool) (*remediation, error) {
	ctx := cmd.Context()
	r := &remediation{}
	var err error
	if r.actor, err = actor(); err != nil {
		return nil, usageErr(err)
	}
	if rf.nowFlag != "" {
		if r.now, err = time.Parse(time.RFC3339, rf.nowFlag); err != nil {
			return nil, usageErr(fmt.Errorf("--now: want an RFC 3339 time such as 2026-11-30T12:00:00Z: %w", err))
		}
	}
	// The catalog is known before any client exists: Targets needs no cloud.
	planning, err := builtin.Registry(nil, nil)
	if err != nil {
		return nil, err
	}
	rf.pf.catalog = planning.Catalog()
	if r.cfg, r.eng, err = a.loadPolicies(cmd, &rf.pf); err != nil {
		return nil, err
	}
	r.targets = rf.tf.targets(r.cfg)
	if rf.tf.sim != "" {
		sim, err := collect.StartSimulator(rf.tf.sim, a.log)
		if err != nil {
			return nil, usageErr(err)
		}
		r.sim = sim
		r.stop = func() { _ = sim.Close() }
		r.targets = sim.Target(r.targets)
	}
	if r.clouds, err = openClouds(ctx, r.targets); err != nil {
		r.Close()
		return nil, err
	}
	// certs: decides where a renewal is delivered, so plans see it too; only commands
	// that keep a database can apply one, since it archives what it replaces there.
	deps := builtin.Deps{AWS: r.clouds.sessions, GCP: r.clouds.gcp, Rotation: r.cfg.Rotation, Certs: r.cfg.Certs, Logger: a.log}
	if needDB {
		if r.st, err = openHistory(ctx, rf.dbPath, r.cfg, true); err != nil {
			r.Close()
			return nil, err
		}
		r.log = audit.New(r.st, audit.Options{Now: time.Now})
		r.gate = gates.New(r.st, r.log, r.cfg.Gates, time.Now)
		deps.Store = r.st
	}
	if r.reg, err = builtin.New(deps); err != nil {
		r.Close()
		return nil, usageErr(err)
	}
	return r, nil
}

// makePlan scans (a snapshot file, or a live collection into a private file) and plans.
func (a *app) makePlan(ctx context.Context, r *remediation, rf *remediationFlags) (*remediate.Plan, error) {
	path := rf.snapPath
	if path == "" {
		cs, err := collect.Resolve(r.targets, a.log)
		if errors.Is(err, collect.ErrNoTargets) {
			return nil, usageErr(errors.New("plan needs --snapshot FILE or live targets (--aws, --aws-org, --gcp-project P, --sim WORLD, or targets: in --config)"))
		}
		if err != nil {
			return nil, usageErr(err)
		}
		dir, err := os.MkdirTemp("", "warden-plan-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "snapshot.json")
		if err := writeAtomically(path, func(w io.Writer) error {
			_, err := collect.Run(ctx, w, cs, a.collectOptions(nil))
			return err
		}); err != nil {
			return nil, err
		}
		for _, c := range cs {
			if cl, ok := c.(io.Closer); ok {
				_ = cl.Close()
			}
		}
	}
	waiverFile := rf.waiverFile
	if waiverFile == "" {
		waiverFile = r.cfg.Waivers
	}
	var ws *waivers.Set
	if waiverFile != "" {
		var err error
		if ws, err = waivers.Load(waiverFile); err != nil {
			return nil, usageErr(err)
		}
	}
	tuneGC()
	res, err := scan.Run(ctx, scan.Request{Source: scan.File(path), Engine: r.eng, Waivers: ws, Now: r.now, Version: version()})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, err
		}
		return nil, usageErr(err)
	}
	return a.planFrom(ctx, r, path, res)
}

// planFrom plans the fixes of a scan's open findings; path is the snapshot it read, where
// the resources those findings are on are read again.
func (a *app) planFrom(ctx context.Context, r *remediation, path string, res *scan.Result) (*remediate.Plan, error) {
	resources, err := resourcesOf(ctx, path, res)
	if err != nil {
		return nil, usageErr(err)
	}
	p, err := remediate.NewPlan(remediate.PlanInput{
		Header: res.Header, Name: res.Scan.Snapshot, Findings: res.Findings,
		Resource: func(uid string) (snapshot.Resource, bool) { x, ok := resources[uid]; return x, ok },
		Complete: scan.Completeness(res.Header), Registry: r.reg, Gates: r.cfg.Gates, Actor: r.actor, Now: time.Now(),
	})
	if err != nil {
		return nil, usageErr(err)
	}
	return p, nil
}

// resourcesOf reads again, from the snapshot file, the resources the open findings are on.
func resourcesOf(ctx context.Context, path string, res *scan.Result) (map[string]snapshot.Resource, error) {
	want := map[string]bool{}
	for _, f := range res.Findings {
		want[f.Resource] = true
	}
	out := map[string]snapshot.Resource{}
	if len(want) == 0 {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd := snapshot.NewReader(f, path, snapshot.WithContext(ctx))
	p := snapshot.NewParser(path)
	var fp fastjson.Parser
	for {
		el, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		// The scan checked every resource already: only those with findings are decoded
		// (checked again) here, the others are skipped on their uid.
		if v, err := fp.ParseBytes(el.Data); err == nil {
			if uid := v.GetStringBytes("uid"); uid != nil && !want[string(uid)] {
				continue
			}
		}
		r, err := p.Decode(el)
		if err != nil {
			return nil, err
		}
		if want[r.UID] {
			out[r.UID] = r
		}
	}
}

func readPlan(path string) (*remediate.Plan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr(fmt.Errorf("read plan: %w", err))
	}
	var p remediate.Plan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, usageErr(fmt.Errorf("read plan %s: %w", path, err))
	}
	if err := p.Check(); err != nil {
		return nil, usageErr(fmt.Errorf("read plan %s: %w", path, err))
	}
	return &p, nil
}

var (
	_ collectors.Reader = (*awscollector.Collector)(nil)
	_ collectors.Reader = (*gcpcollector.Collector)(nil)
)
