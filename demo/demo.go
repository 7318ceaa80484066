// Package demo runs one whole reconciliation of the bundled example organisation, acme,
// on warden's cloud simulator inside the process: the use case behind `warden demo`.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/config"
	acmefixture "github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/internal/atomicfile"
	"github.com/warden-sec/warden/internal/termesc"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/env"
	"github.com/warden-sec/warden/remediate/show"
	"github.com/warden-sec/warden/scan"
)

// marker marks a folder warden demo made, so that a second run may empty it and
// nothing else is ever emptied.
const marker = ".warden-demo"

// Requester is who asks for the demo's fixes. It is not the person at the terminal,
// who approves them: the gates never let a requester approve their own fix.
const Requester = "warden-demo"

// SecondApprover is the other approver the demo's gates list, so that critical fixes
// (two approvals) show what waits for someone else.
const SecondApprover = "security-lead"

// run is one demo's state, from step to step.
type run struct {
	o     Options
	dir   string
	start time.Time
	step  int
	you   string
	// warden is how the printed commands call warden, hint what to do first when that
	// "warden" is not on the PATH.
	warden, hint string

	e     *env.Env
	plan  *remediate.Plan
	first *scan.Result
	last  *scan.Result
	// applied are the actions verified in the cloud, by id.
	applied map[string]remediate.Item
	// pending are the actions still waiting for approval, in plan order.
	pending []remediate.Item
	// decided counts the terminal's decisions.
	approved, denied, skipped int
	audit                     audit.Report
	score                     compliance.Score
	reportPath                string
}

const steps = 8

// Options say where the demo writes and who approves.
type Options struct {
	// Dir is the folder everything is written to: made if missing, emptied first if an
	// earlier demo made it, refused if it holds anything else.
	Dir string
	// Framework is the framework of the compliance report.
	Framework *compliance.Framework
	// Interactive asks for each approval on Stdin; without it approvals stay pending and
	// the commands that decide them are written down.
	Interactive bool
	// You is the person at the terminal, who approves; never Requester or SecondApprover.
	You string
	// Stdout receives the demo's lines, Stdin the answers to its questions.
	Stdout io.Writer
	Stdin  io.Reader
	Logger *slog.Logger
	// Version is warden's version, for the snapshots and the report.
	Version string
	// Collect are the options of each collection (how it reports itself).
	Collect collect.Options
	// Now, when set, is the time the demo's scans judge ages at (keys, passwords,
	// certificates) and the simulated clouds' clock starts at (what IAM's last-accessed
	// data reports is as of that clock). acme's keys, certificates and past use age with
	// the calendar, so a test that counts findings pins it; zero is the read's time.
	Now time.Time
}

// Run runs one whole reconciliation of acme on the in-process simulator: collect,
// evaluate, plan, apply, approve, apply, verify, report; each step is a line on Stdout,
// and a summary closes the run.
func Run(ctx context.Context, o Options) error {
	if o.You == Requester || o.You == SecondApprover {
		return fmt.Errorf("you act as %q, a name the demo gives to someone else: set WARDEN_ACTOR to your own name", o.You)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	dir, err := prepareDir(o.Dir)
	if err != nil {
		return err
	}
	d := &run{o: o, dir: dir, start: time.Now(), you: o.You, applied: map[string]remediate.Item{}}
	d.warden, d.hint = d.runningWarden()
	if err := d.writeInputs(); err != nil {
		return err
	}
	fmt.Fprintf(o.Stdout, "warden demo: acme (3 AWS accounts in an organisation, 2 GCP projects), simulated in this process\n")
	fmt.Fprintf(o.Stdout, "everything goes to %s\n", d.rel(dir))
	fmt.Fprintf(o.Stdout, "decisions here are unchecked names (gates.unchecked_names, a demo's setting); docs/approvals.md, Signed decisions, says how to sign them\n")
	fmt.Fprintf(o.Stdout, "you (%s) are an approver in the demo's own config, %s, beside %s; no other config is touched\n\n",
		termesc.Escape(d.you), d.rel(d.path("warden.yaml")), SecondApprover)

	cfg, err := config.Load(d.path("warden.yaml"))
	if err != nil {
		return err
	}
	if d.e, err = env.Open(ctx, env.Options{Config: cfg, Sim: d.path("world.yaml"), SimNow: o.Now, DB: d.path("warden.db"), Actor: Requester, Logger: o.Logger}); err != nil {
		return err
	}
	defer d.e.Close()

	if err := d.scan(ctx, "collect", "snapshot.json", &d.first); err != nil {
		return err
	}
	if err := d.makePlan(ctx); err != nil {
		return err
	}
	m := remediate.New(d.e.MachineOptions(o.Logger))
	if err := d.apply(ctx, m, "apply", "fixes of low risk"); err != nil {
		return err
	}
	if err := d.ask(ctx, o.Interactive); err != nil {
		return err
	}
	if d.approved > 0 {
		if err := d.apply(ctx, m, "apply", "what you approved"); err != nil {
			return err
		}
	} else {
		d.line("apply", 0, "nothing approved to apply")
	}
	if err := d.verify(ctx); err != nil {
		return err
	}
	if err := d.writeReport(ctx, o.Framework); err != nil {
		return err
	}
	if err := d.saveWorld(); err != nil {
		return err
	}
	d.screen()
	return nil
}

// prepareDir makes the demo's folder, or empties the one an earlier demo made.
func prepareDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--dir: %w", err)
	}
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("--dir: %w", err)
	case len(entries) == 0:
	default:
		if _, err := os.Stat(filepath.Join(abs, marker)); err != nil {
			return "", fmt.Errorf("--dir %s: the folder holds files an earlier demo did not write; name a new or empty folder", dir)
		}
		// An earlier demo's folder: start fresh, as the user asked for a demo, not a resume.
		if err := os.RemoveAll(abs); err != nil {
			return "", fmt.Errorf("--dir %s: empty the earlier demo's folder: %w", dir, err)
		}
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("--dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(abs, marker), []byte("made by warden demo: a second run empties this folder\n"), 0o600); err != nil {
		return "", fmt.Errorf("--dir: %w", err)
	}
	return abs, nil
}

func (d *run) path(name string) string { return filepath.Join(d.dir, name) }

// rel names a file of the demo as the user can type it from where they ran the demo.
func (d *run) rel(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			if r == "." {
				return "."
			}
			return "./" + r
		}
	}
	return path
}

// writeInputs writes the world the simulator serves and the config of this reconciliation.
func (d *run) writeInputs() error {
	if err := os.WriteFile(d.path("world.yaml"), acmefixture.World(), 0o600); err != nil {
		return fmt.Errorf("write the demo's world: %w", err)
	}
	cfg := fmt.Sprintf(`# Written by warden demo: the settings of the demo's reconciliation of acme.
# Every warden command takes it: warden approvals list --config %[1]s
db: %[2]q
gates:
  auto: [low]                 # fixes of low risk run without approval
  approvers: [%[3]q, %[4]q]   # who may approve; never the requester (%[5]s)
  quorum: {critical: 2}       # critical fixes need two approvers
  unchecked_names: true       # a demo's: decisions are names nobody checks; list gates.signers instead
`, d.rel(d.path("warden.yaml")), d.path("warden.db"), d.you, SecondApprover, Requester)
	if err := os.WriteFile(d.path("warden.yaml"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write the demo's config: %w", err)
	}
	return nil
}

// line prints one step's outcome.
func (d *run) line(name string, took time.Duration, format string, args ...any) {
	d.step++
	t := ""
	if took > 0 {
		t = fmt.Sprintf("  (%.1fs)", took.Seconds())
	}
	fmt.Fprintf(d.o.Stdout, "%d/%d %-9s %s%s\n", d.step, steps, name, fmt.Sprintf(format, args...), t)
}

// scan collects the simulated clouds into file, evaluates the snapshot and records the
// scan in the history.
func (d *run) scan(ctx context.Context, name, file string, into **scan.Result) error {
	began := time.Now()
	cs, err := collect.Resolve(d.e.Targets, d.o.Logger)
	if err != nil {
		return err
	}
	defer func() {
		for _, c := range cs {
			if cl, ok := c.(io.Closer); ok {
				_ = cl.Close()
			}
		}
	}()
	path := d.path(file)
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := collect.Run(ctx, w, cs, d.o.Collect)
		return err
	}); err != nil {
		return fmt.Errorf("collect the simulated clouds: %w", err)
	}
	collected := time.Since(began)
	res, err := scan.Run(ctx, scan.Request{Source: scan.File(path), Engine: d.e.Engine, Store: d.e.Store, Version: d.o.Version, Now: d.o.Now,
		Recorded: scan.Audit(d.e.Log, d.you, scan.VersionEvents(d.e.Engine, d.e.Config.File, d.e.Config.Version)...)})
	if err != nil {
		return fmt.Errorf("evaluate %s: %w", d.rel(path), err)
	}
	*into = res
	if name == "collect" {
		d.line("collect", collected, "%d resources from 3 AWS accounts and 2 GCP projects%s → %s",
			res.Scan.Resources, unreadText(res), d.rel(path))
		d.line("evaluate", time.Since(began)-collected, "%s · %d policies · scan %d recorded",
			severityText(res), res.Summary.Policies, res.Scan.ID)
	}
	return nil
}

// fixes is "1 fix", "2 fixes".
func fixes(n int) string {
	if n == 1 {
		return "1 fix"
	}
	return fmt.Sprintf("%d fixes", n)
}

func unreadText(res *scan.Result) string {
	if n := len(res.IncompleteScopes); n > 0 {
		return fmt.Sprintf(" (%s could not be read: its resources are unknown, not clean)", show.Count(n, "scope"))
	}
	return ""
}

// severityText is "242 findings: 18 critical, 82 high, …".
func severityText(res *scan.Result) string {
	var parts []string
	for _, sev := range []string{"critical", "high", "medium", "low", "info"} {
		if n := res.Summary.BySeverity[sev]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, sev))
		}
	}
	s := show.Count(res.Summary.Findings, "finding")
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

func (d *run) makePlan(ctx context.Context) error {
	began := time.Now()
	p, err := remediate.PlanScan(ctx, d.path("snapshot.json"), d.first, remediate.ScanPlanOptions{Registry: d.e.Registry, Gates: d.e.Config.Gates, Actor: d.e.Actor})
	if err != nil {
		return err
	}
	d.plan = p
	auto := 0
	for _, act := range p.Actions {
		if act.Approvals.Verdict == "auto" {
			auto++
		}
	}
	if err := atomicfile.Write(d.path("plan.json"), func(w io.Writer) error { return show.PlanJSON(w, p) }); err != nil {
		return err
	}
	d.line("plan", time.Since(began), "%s: %d low-risk ones run now, %d wait for approval; %s (no fix: manual, notify-only) → %s",
		fixes(len(p.Actions)), auto, len(p.Actions)-auto, show.Count(len(p.Notices), "notice"), d.rel(d.path("plan.json")))
	return nil
}

// apply runs the plan: what the gates let through, or what was approved since.
func (d *run) apply(ctx context.Context, m *remediate.Machine, name, what string) error {
	began := time.Now()
	res, err := m.Apply(ctx, d.plan, true)
	if err != nil {
		return fmt.Errorf("apply %s: %w", what, err)
	}
	d.pending = d.pending[:0]
	now, failed := 0, 0
	for _, it := range res.Items {
		switch it.State {
		case remediate.StateVerified:
			if _, seen := d.applied[it.Action]; !seen {
				now++
			}
			d.applied[it.Action] = it
		case remediate.StatePending, remediate.StateApproved:
			d.pending = append(d.pending, it)
		case remediate.StateFailed:
			failed++
		}
	}
	msg := fmt.Sprintf("%s: %s applied and verified in the cloud", what, fixes(now))
	if failed > 0 {
		msg += fmt.Sprintf(", %d failed", failed)
	}
	if res.Stopped != "" {
		msg += "; stopped: " + res.Stopped
	}
	d.line(name, time.Since(began), "%s", msg)
	return nil
}
