// Command warden keeps cloud security posture where its owners declared it: it evaluates
// snapshots of cloud resources against Rego policies and reports what drifted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/internal/interrupt"
	"github.com/warden-sec/warden/internal/profile"
	"github.com/warden-sec/warden/internal/termesc"
)

// Exit codes, as DESIGN.md defines them, plus the shell's code for an interrupted run.
const (
	exitOK       = 0
	exitFindings = 1
	// exitError is bad input, an error, or a scan that could not judge everything
	// (failed policy evaluations).
	exitError = 2
	// exitInterrupted is 128 + SIGINT; a run stopped by another signal exits 128 + its
	// number (143 for SIGTERM).
	exitInterrupted = interrupt.CanceledCode
)

// exitErr carries an exit code out of a command.
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitErr) Unwrap() error { return e.err }

// app holds what every command shares: output streams and the logger.
type app struct {
	stdout, stderr io.Writer
	stdin          io.Reader
	logLevel       string
	cpuProfile     string
	memProfile     string
	stopProfile    func() error
	log            *slog.Logger
}

func main() {
	ctx, stop := interrupt.NotifyContext(context.Background(), os.Stderr, os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes warden with args and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{stdout: stdout, stderr: stderr, stdin: stdin}
	root := a.rootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	a.stop()
	if ctx.Err() != nil && !runsUntilInterrupted(cmd) {
		// Whatever the command made of it, a cancelled run did not finish: it never
		// exits 0 or 1 as though it had judged everything.
		if err != nil && !errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "warden: %s\n", termesc.EscapeLines(err.Error()))
		}
		cause := context.Cause(ctx)
		fmt.Fprintf(stderr, "warden: interrupted (%v): the run did not finish\n", cause)
		return interrupt.ExitCodeOf(cause)
	}
	if err == nil {
		return exitOK
	}
	code := exitError
	if ee, ok := errors.AsType[*exitErr](err); ok {
		code, err = ee.code, ee.err
	}
	if err != nil {
		// Errors quote snapshots, policies and servers: no control character in them
		// reaches the terminal raw.
		fmt.Fprintf(stderr, "warden: %s\n", termesc.EscapeLines(err.Error()))
	}
	return code
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "warden",
		Short: "Keep cloud security posture where its owners declared it",
		Long: `warden evaluates cloud resources against Rego policies and reports what drifted from
the posture their owners declared.

It reads a snapshot (a JSON file of normalized resources, docs/resources.md; 'warden
synth' writes synthetic ones), evaluates every resource against the policies for its type — the
built-in pack plus your own — applies waivers, records the scan in its history, and
prints findings.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input,
an error, or an incomplete scan (a policy evaluation failed: the report lists the
errors; or nothing at or above --fail-on was found but a scope could not be read in
full), 130 interrupted (SIGINT; 143 for SIGTERM): no report, nothing recorded.`,
		Example: `  # Scan the bundled example organisation
  warden scan --snapshot fixtures/acme/snapshot.json

  # Only fail a pipeline on critical findings, as JSON
  warden scan --snapshot snap.json --fail-on critical --format json

  # See what the built-in pack checks
  warden policy list`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		Version:           version(),
		PersistentPreRunE: a.setup,
	}
	root.PersistentFlags().StringVar(&a.logLevel, "log-level", "warn", "log level on stderr: debug, info, warn or error")
	root.PersistentFlags().StringVar(&a.cpuProfile, "cpuprofile", "", "write a Go CPU profile of the command to this file (each SIGUSR1 moves on to FILE.1, FILE.2, …)")
	root.PersistentFlags().MarkHidden("cpuprofile")
	root.PersistentFlags().StringVar(&a.memProfile, "memprofile", "", "write a Go heap profile of the command at its highest live heap to this file")
	root.PersistentFlags().MarkHidden("memprofile")
	root.PersistentPostRun = func(*cobra.Command, []string) { a.stop() }
	root.AddCommand(a.demoCmd(), a.scanCmd(), a.collectCmd(), a.policyCmd(), a.findingsCmd(), a.accessCmd(), a.planCmd(), a.applyCmd(), a.actionsCmd(), a.rollbackCmd(),
		a.approvalsCmd(), a.approveCmd(), a.denyCmd(), a.pauseCmd(), a.resumeCmd(), a.statusCmd(), a.auditCmd(), a.reportCmd(), untilInterrupted(a.serveCmd()),
		a.tokenCmd(), a.configCmd(), a.synthCmd(), a.benchCmd(), untilInterrupted(a.simCmd()), a.versionCmd(), a.permissionsCmd())
	return root
}

// untilInterruptedKey marks a command (a server) whose normal end is a signal: its own
// result decides the exit code, not the interruption.
const untilInterruptedKey = "warden/runs-until-interrupted"

func untilInterrupted(cmd *cobra.Command) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[untilInterruptedKey] = "true"
	return cmd
}

func runsUntilInterrupted(cmd *cobra.Command) bool {
	return cmd != nil && cmd.Annotations[untilInterruptedKey] == "true"
}

func (a *app) setup(cmd *cobra.Command, _ []string) error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(a.logLevel)); err != nil {
		return usageErr(fmt.Errorf("--log-level: %w", err))
	}
	a.log = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
	stop, err := profile.Start(a.cpuProfile, a.memProfile)
	if err != nil {
		return usageErr(err)
	}
	a.stopProfile = stop
	return nil
}

// stop ends what setup started; it runs after the command, whatever its outcome.
func (a *app) stop() {
	if a.stopProfile != nil {
		if err := a.stopProfile(); err != nil {
			a.log.Warn("a profile was not written in full", "err", err)
		}
		a.stopProfile = nil
	}
}

// usageErr marks an error as bad input: exit code 2.
func usageErr(err error) error { return &exitErr{code: exitError, err: err} }
