package main

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

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/collect"
	"github.com/warden-sec/warden/compliance"
	acmefixture "github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/scan"
)

// demoMarker marks a folder warden demo made, so that a second run may empty it and
// nothing else is ever emptied.
const demoMarker = ".warden-demo"

// demoRequester is who asks for the demo's fixes. It is not the person at the terminal,
// who approves them: the gates never let a requester approve their own fix.
const demoRequester = "warden-demo"

// demoSecondApprover is the other approver the demo's gates list, so that critical fixes
// (two approvals) show what waits for someone else.
const demoSecondApprover = "security-lead"

type demoFlags struct {
	dir         string
	framework   string
	interactive bool
}

func (a *app) demoCmd() *cobra.Command {
	var df demoFlags
	cmd := &cobra.Command{
		Use:   "demo [--dir FOLDER]",
		Short: "Run one whole reconciliation on a simulated organisation, in under a minute",
		Long: `Run one whole reconciliation of the bundled example organisation, acme (3 AWS
accounts in an organisation, 2 GCP projects), served by warden's cloud simulator inside
this process and read through the official AWS and Google SDK clients. Nothing outside
the simulator is called; nothing needs setting up.

The steps are the ones warden runs on a real organisation:
  1. collect   read every account and project
  2. evaluate  run the policy pack, record the scan in the history
  3. plan      turn the open findings into the smallest fixes, each with its risk
  4. apply     fixes of low risk run at once: re-read, changed, read again, verified
  5. approve   the others wait for approval: on a terminal you are asked, fix by fix,
               with the exact change shown (approve, deny or skip); without a terminal
               they stay pending and the 'warden approve' commands are written down
  6. apply     what you approved runs (critical fixes need a second approver)
  7. verify    the clouds are read and evaluated again; the audit log is verified
               and a signed checkpoint of it is kept
  8. report    an HTML compliance report of the history

Everything lands in one folder (--dir, default ./warden-demo): the config, the store
(SQLite: history, actions, approvals, audit log), the snapshots, the report, the audit
key and checkpoint, and the simulated clouds as the demo left them (world-now.yaml), so
that 'warden serve --sim' continues where the demo stopped. A second run empties the
folder it made before and starts fresh; a folder the demo did not make is never touched.

You approve as $WARDEN_ACTOR, or else your OS user name; the fixes are requested by
"` + demoRequester + `", and "` + demoSecondApprover + `" is the second approver critical fixes need.`,
		Example: `  warden demo
  warden demo --dir /tmp/acme --framework soc2
  warden demo --interactive=false    # leave every approval pending, print the commands`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("interactive") {
				df.interactive = readerIsTerminal(a.stdin)
			}
			return a.runDemo(cmd, df)
		},
	}
	f := cmd.Flags()
	f.StringVar(&df.dir, "dir", "warden-demo", "the folder everything is written to (made if missing; emptied first if an earlier demo made it)")
	f.StringVar(&df.framework, "framework", "cis-aws-3.0", "the framework of the compliance report ('warden report --list')")
	f.BoolVar(&df.interactive, "interactive", false, "ask for each approval on standard input (default: when it is a terminal)")
	return cmd
}

// demoRun is one demo's state, from step to step.
type demoRun struct {
	a     *app
	dir   string
	start time.Time
	step  int
	you   string

	r     *remediation
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

const demoSteps = 8

func (a *app) runDemo(cmd *cobra.Command, df demoFlags) error {
	ctx := cmd.Context()
	fw, err := compliance.Lookup(df.framework)
	if err != nil {
		return usageErr(fmt.Errorf("--framework: %w", err))
	}
	you, err := actor()
	if err != nil {
		return usageErr(err)
	}
	if you == demoRequester || you == demoSecondApprover {
		return usageErr(fmt.Errorf("you act as %q, a name the demo gives to someone else: set %s to your own name", you, actorEnv))
	}
	if !cmd.Flags().Changed("log-level") {
		// The demo's own lines say what a warning would (an unread scope, a failed fix).
		a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	dir, err := prepareDemoDir(df.dir)
	if err != nil {
		return usageErr(err)
	}
	d := &demoRun{a: a, dir: dir, start: time.Now(), you: you, applied: map[string]remediate.Item{}}
	if err := d.writeInputs(); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "warden demo: acme (3 AWS accounts in an organisation, 2 GCP projects), simulated in this process\n")
	fmt.Fprintf(a.stdout, "everything goes to %s\n\n", d.rel(dir))

	rf := remediationFlags{dbPath: d.path("warden.db")}
	rf.pf.configFile = d.path("warden.yaml")
	rf.tf.sim = d.path("world.yaml")
	if d.r, err = a.openRemediation(cmd, &rf, true); err != nil {
		return err
	}
	defer d.r.Close()
	d.r.actor = demoRequester

	if err := d.scan(ctx, "collect", "snapshot.json", &d.first); err != nil {
		return err
	}
	if err := d.makePlan(ctx); err != nil {
		return err
	}
	m := remediate.New(remediate.Options{Store: d.r.st, Log: d.r.log, Gate: d.r.gate, Gates: d.r.cfg.Gates, Registry: d.r.reg,
		Observer: d.r.clouds.readers, Engine: d.r.eng, Actor: demoRequester, Logger: a.log,
		Versions: scan.VersionEvents(d.r.eng, d.r.cfg.File, d.r.cfg.Version)})
	if err := d.apply(ctx, m, "apply", "fixes of low risk"); err != nil {
		return err
	}
	if err := d.ask(ctx, df.interactive); err != nil {
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
	if err := d.writeReport(ctx, fw); err != nil {
		return err
	}
	if err := d.saveWorld(); err != nil {
		return err
	}
	d.screen()
	return nil
}

// prepareDemoDir makes the demo's folder, or empties the one an earlier demo made.
func prepareDemoDir(dir string) (string, error) {
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
		if _, err := os.Stat(filepath.Join(abs, demoMarker)); err != nil {
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
	if err := os.WriteFile(filepath.Join(abs, demoMarker), []byte("made by warden demo: a second run empties this folder\n"), 0o600); err != nil {
		return "", fmt.Errorf("--dir: %w", err)
	}
	return abs, nil
}

func (d *demoRun) path(name string) string { return filepath.Join(d.dir, name) }

// rel names a file of the demo as the user can type it from where they ran the demo.
func (d *demoRun) rel(path string) string {
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
func (d *demoRun) writeInputs() error {
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
`, d.rel(d.path("warden.yaml")), d.path("warden.db"), d.you, demoSecondApprover, demoRequester)
	if err := os.WriteFile(d.path("warden.yaml"), []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("write the demo's config: %w", err)
	}
	return nil
}

// line prints one step's outcome.
func (d *demoRun) line(name string, took time.Duration, format string, args ...any) {
	d.step++
	t := ""
	if took > 0 {
		t = fmt.Sprintf("  (%.1fs)", took.Seconds())
	}
	fmt.Fprintf(d.a.stdout, "%d/%d %-9s %s%s\n", d.step, demoSteps, name, fmt.Sprintf(format, args...), t)
}

// scan collects the simulated clouds into file, evaluates the snapshot and records the
// scan in the history.
func (d *demoRun) scan(ctx context.Context, name, file string, into **scan.Result) error {
	began := time.Now()
	cs, err := collect.Resolve(d.r.targets, d.a.log)
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
	if err := writeAtomically(path, func(w io.Writer) error {
		_, err := collect.Run(ctx, w, cs, d.a.collectOptions(nil))
		return err
	}); err != nil {
		return fmt.Errorf("collect the simulated clouds: %w", err)
	}
	collected := time.Since(began)
	res, err := scan.Run(ctx, scan.Request{Source: scan.File(path), Engine: d.r.eng, Store: d.r.st, Version: version(),
		Recorded: scan.Audit(d.r.log, d.you, scan.VersionEvents(d.r.eng, d.r.cfg.File, d.r.cfg.Version)...)})
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
		return fmt.Sprintf(" (%s could not be read: its resources are unknown, not clean)", countOf(n, "scope"))
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
	s := countOf(res.Summary.Findings, "finding")
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	return s
}

func (d *demoRun) makePlan(ctx context.Context) error {
	began := time.Now()
	p, err := d.a.planFrom(ctx, d.r, d.path("snapshot.json"), d.first)
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
	if err := writeAtomically(d.path("plan.json"), func(w io.Writer) error { return writePlanJSON(w, p) }); err != nil {
		return err
	}
	d.line("plan", time.Since(began), "%s: %d low-risk ones run now, %d wait for approval; %s (no fix: manual, notify-only) → %s",
		fixes(len(p.Actions)), auto, len(p.Actions)-auto, countOf(len(p.Notices), "notice"), d.rel(d.path("plan.json")))
	return nil
}

// apply runs the plan: what the gates let through, or what was approved since.
func (d *demoRun) apply(ctx context.Context, m *remediate.Machine, name, what string) error {
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
