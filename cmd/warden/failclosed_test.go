package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/warden-sec/warden/internal/interrupt"
	"github.com/warden-sec/warden/store"
)

// brokenPolicy fails at run time on every root user: two values for the complete rule x.
const brokenPolicy = `# METADATA
# title: Broken
# custom:
#   id: TEST-BROKEN-001
#   severity: low
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package ours.broken

x := 1 if input.resource.uid
x := 2 if input.resource.uid

deny contains "never" if x == 3
`

// rootPolicy finds a root user without MFA, and fails at run time when the root user
// also has active access keys.
const rootPolicy = `# METADATA
# title: Root without MFA
# custom:
#   id: TEST-ROOT-001
#   severity: critical
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package ours.root

x := 1 if input.resource.attributes.mfa_active == false
x := 2 if input.resource.attributes.access_keys_active > 0

deny contains "root has no MFA" if {
	input.resource.attributes.mfa_active == false
	x != 3
}
`

// slowPolicy iterates for minutes unless it is interrupted.
const slowPolicy = `# METADATA
# title: Slow
# custom:
#   id: TEST-SLOW-001
#   severity: low
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package ours.slow

deny contains "never" if {
	some i in numbers.range(1, 30000)
	some j in numbers.range(1, 30000)
	i * j == -1
}
`

func rootSnapshot(t *testing.T, dir, name, collectedAt string, mfa bool, keys int) string {
	t.Helper()
	m := "false"
	if mfa {
		m = "true"
	}
	return write(t, dir, name, `{"version": 1, "collected_at": "`+collectedAt+`", "resources": [
{"uid": "arn:aws:iam::111111111111:root", "type": "aws.iam.root_user", "account": "111111111111", "region": "global",
 "attributes": {"mfa_active": `+m+`, "access_keys_active": `+string(rune('0'+keys))+`}}]}`)
}

// A scan whose policies failed at run time has not judged everything: exit 2, and the
// report shows what it found plus the errors, in every format.
func TestScan_evalErrorsMakeTheScanIncomplete(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "pol")
	write(t, pol, "broken.rego", brokenPolicy)
	snap := rootSnapshot(t, dir, "root.json", "2026-11-30T12:00:00Z", false, 0)
	if code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db"); code != 1 {
		t.Fatalf("without the broken policy: exit %d, want 1 (IAM-012): %s", code, stderr)
	}
	for _, tc := range []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"table", func(t *testing.T, out string) {
			for _, want := range []string{"WARDEN-AWS-IAM-012", "INCOMPLETE: 1 policy evaluation failed", "TEST-BROKEN-001 on arn:aws:iam::111111111111:root"} {
				if !strings.Contains(out, want) {
					t.Errorf("table lacks %q:\n%s", want, out)
				}
			}
		}},
		{"json", func(t *testing.T, out string) {
			var doc struct {
				Summary struct {
					Incomplete bool `json:"incomplete"`
					Findings   int  `json:"findings"`
				} `json:"summary"`
				EvalErrors []struct{ Policy, Resource string } `json:"eval_errors"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if !doc.Summary.Incomplete || doc.Summary.Findings == 0 || len(doc.EvalErrors) != 1 || doc.EvalErrors[0].Policy != "TEST-BROKEN-001" {
				t.Errorf("summary %+v, eval errors %+v", doc.Summary, doc.EvalErrors)
			}
		}},
		{"sarif", func(t *testing.T, out string) {
			var doc struct {
				Runs []struct {
					Results     []any `json:"results"`
					Invocations []struct {
						ExecutionSuccessful bool  `json:"executionSuccessful"`
						Notifications       []any `json:"toolExecutionNotifications"`
					} `json:"invocations"`
				} `json:"runs"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Runs) != 1 || len(doc.Runs[0].Results) == 0 || len(doc.Runs[0].Invocations) != 1 ||
				doc.Runs[0].Invocations[0].ExecutionSuccessful || len(doc.Runs[0].Invocations[0].Notifications) != 1 {
				t.Errorf("SARIF run does not say it failed:\n%s", out)
			}
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			code, out, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--policies", pol, "--format", tc.format)
			if code != exitError {
				t.Errorf("exit %d, want %d", code, exitError)
			}
			if !strings.Contains(stderr, "scan incomplete: 1 policy evaluation failed") {
				t.Errorf("stderr = %q", stderr)
			}
			tc.check(t, out)
		})
	}
	// Even a --fail-on no finding reaches leaves an incomplete scan failing.
	if code, _, _ := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--policies", pol, "--no-builtin", "--fail-on", "critical"); code != exitError {
		t.Errorf("incomplete scan with nothing at --fail-on: exit %d, want %d", code, exitError)
	}
}

// A finding whose policy failed on its resource is neither confirmed nor resolved: the
// history carries it over as unknown.
func TestFindingsDiff_failedPolicyLeavesItsFindingUnknown(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	pol := filepath.Join(dir, "pol")
	write(t, pol, "root.rego", rootPolicy)
	one := rootSnapshot(t, dir, "one.json", "2026-11-30T12:00:00Z", false, 0)
	two := rootSnapshot(t, dir, "two.json", "2026-11-30T13:00:00Z", false, 1)
	if code, _, stderr := warden(t, "", "scan", "--snapshot", one, "--db", db, "--no-builtin", "--policies", pol); code != exitFindings {
		t.Fatalf("first scan: exit %d: %s", code, stderr)
	}
	if code, _, stderr := warden(t, "", "scan", "--snapshot", two, "--db", db, "--no-builtin", "--policies", pol); code != exitError {
		t.Fatalf("second scan: exit %d, want %d: %s", code, exitError, stderr)
	}
	code, out, stderr := warden(t, "", "findings", "diff", "--db", db, "--format", "json")
	if code != 0 {
		t.Fatalf("diff: exit %d: %s", code, stderr)
	}
	var d struct {
		Resolved, Unknown []struct{ Policy string }
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Resolved) != 0 || len(d.Unknown) != 1 || d.Unknown[0].Policy != "TEST-ROOT-001" {
		t.Errorf("resolved %+v, unknown %+v: want the root finding unknown", d.Resolved, d.Unknown)
	}
}

// Cancelling a scan while a policy evaluates exits with the signal's code, prints no
// report and records nothing.
func TestScan_interruptedWhileEvaluating(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "pol")
	write(t, pol, "slow.rego", slowPolicy)
	snap := rootSnapshot(t, dir, "root.json", "2026-11-30T12:00:00Z", true, 0)
	for _, tc := range []struct {
		name  string
		cause error
		code  int
	}{
		{"SIGINT", interrupt.Signal{Sig: syscall.SIGINT}, 130},
		{"SIGTERM", interrupt.Signal{Sig: syscall.SIGTERM}, 143},
		{"cancelled", nil, exitInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "h.db")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			time.AfterFunc(time.Second, func() { cancel(tc.cause) })
			var out, errb strings.Builder
			code := run(ctx, []string{"scan", "--snapshot", snap, "--db", db, "--no-builtin", "--policies", pol, "--format", "json"}, strings.NewReader(""), &out, &errb)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			if out.Len() != 0 {
				t.Errorf("an interrupted scan printed a report:\n%s", out.String())
			}
			if !strings.Contains(errb.String(), "interrupted") {
				t.Errorf("stderr does not say the run was interrupted: %q", errb.String())
			}
			assertNoScans(t, db)
		})
	}
}

func assertNoScans(t *testing.T, db string) {
	t.Helper()
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return
	}
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if scans, err := st.Scans(context.Background(), 10); err != nil || len(scans) != 0 {
		t.Errorf("the history holds %d scans (%v), want none", len(scans), err)
	}
}

// TestHelperProcess is warden's main in a child process, for the signal test; it does
// nothing unless WARDEN_HELPER_PROCESS is set.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("WARDEN_HELPER_PROCESS") != "1" {
		t.Skip("only runs as a child of TestScan_sigintInChildProcess")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	ctx, stop := interrupt.NotifyContext(context.Background(), os.Stderr, os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// A real SIGINT during evaluation, through main's signal wiring.
func TestScan_sigintInChildProcess(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "pol")
	write(t, pol, "slow.rego", slowPolicy)
	snap := rootSnapshot(t, dir, "root.json", "2026-11-30T12:00:00Z", true, 0)
	db := filepath.Join(dir, "h.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "--",
		"scan", "--snapshot", snap, "--db", db, "--no-builtin", "--policies", pol, "--format", "json")
	cmd.Env = append(os.Environ(), "WARDEN_HELPER_PROCESS=1")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("warden did not stop within 30 s of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr: %s", code, errb.String())
	}
	if strings.Contains(out.String(), `"findings"`) {
		t.Errorf("an interrupted scan printed a report:\n%s", out.String())
	}
	assertNoScans(t, db)
}

// A collected_at far ahead of the clock would silently disable every age check.
func TestScan_refusesCollectedAtInTheFuture(t *testing.T) {
	dir := t.TempDir()
	for _, at := range []string{"3000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"} {
		snap := rootSnapshot(t, dir, "future-"+at[:4]+".json", at, true, 0)
		code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db")
		if code != exitError || !strings.Contains(stderr, snap) || !strings.Contains(stderr, "collected_at: "+at) {
			t.Errorf("collected_at %s: exit %d, stderr %q; want 2 naming the file and collected_at", at, code, stderr)
		}
		if code, _, stderr := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--now", "2026-11-30T12:00:00Z"); code != 0 {
			t.Errorf("collected_at %s with --now: exit %d, want 0: %s", at, code, stderr)
		}
	}
}

// Uids, names, messages and the snapshot's own text never drive the terminal: control
// characters are escaped in the table, findings diff and error messages, and JSON stays
// valid.
func TestScan_controlCharactersNeverReachTheTerminal(t *testing.T) {
	dir := t.TempDir()
	snap := write(t, dir, "esc.json", `{"version": 1, "collected_at": "2026-11-30T12:00:00Z", "resources": [
{"uid": "arn:aws:iam::1:user/\u001b]0;pwned\u0007\u001b[2J", "type": "aws.iam.user", "name": "evil\u009b2J\u202e", "account": "1", "region": "global",
 "attributes": {"mfa_active": true, "password_enabled": false, "access_keys": [], "attached_policies": [{"arn": "arn:aws:iam::aws:policy/ReadOnlyAccess", "name": "ReadOnly\u001b[31mAccess"}], "inline_policies": []}}]}`)
	raw := func(s string) bool { return strings.ContainsAny(s, "\x1b\x07\u009b\u202e") }
	db := filepath.Join(dir, "h.db")
	// A first scan without the user, so that the diff lists it as new.
	before := rootSnapshot(t, dir, "before.json", "2026-11-30T11:00:00Z", true, 0)
	if code, _, stderr := warden(t, "", "scan", "--snapshot", before, "--db", db); code != 0 {
		t.Fatalf("first scan: exit %d: %s", code, stderr)
	}
	code, out, stderr := warden(t, "", "scan", "--snapshot", snap, "--db", db, "--fail-on", "low")
	if code != exitFindings {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if raw(out) || !strings.Contains(out, `arn:aws:iam::1:user/\x1b]0;pwned\a\x1b[2J`) {
		t.Errorf("table shows control characters raw, or not at all:\n%q", out)
	}
	if code, out, _ := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--format", "json"); code != 0 || !json.Valid([]byte(out)) || !utf8.ValidString(out) || raw(out) {
		t.Errorf("JSON output (exit %d) is not valid, escaped JSON:\n%q", code, out)
	}
	if code, out, _ := warden(t, "", "scan", "--snapshot", snap, "--no-db", "--format", "sarif"); code != 0 || !json.Valid([]byte(out)) || raw(out) {
		t.Errorf("SARIF output (exit %d) is not valid, escaped JSON:\n%q", code, out)
	}
	code, out, stderr = warden(t, "", "findings", "diff", "--db", db)
	if code != 0 || raw(out) || !strings.Contains(out, `\x1b]0;pwned`) {
		t.Errorf("findings diff (exit %d, %s) shows control characters raw:\n%q", code, stderr, out)
	}
	code, out, stderr = warden(t, "", "findings", "diff", "--db", db, "--format", "json")
	if code != 0 || raw(out) || !json.Valid([]byte(out)) {
		t.Errorf("findings diff --format json (exit %d, %s) is not valid, escaped JSON:\n%q", code, stderr, out)
	}
	// Errors quote the input too: an unknown header field with an escape sequence.
	bad := write(t, dir, "badkey.json", "{\"version\": 1, \"\\u001b[2Jx\": 1, \"resources\": []}")
	code, _, stderr = warden(t, "", "scan", "--snapshot", bad, "--no-db")
	if code != exitError || raw(stderr) {
		t.Errorf("error (exit %d) shows control characters raw: %q", code, stderr)
	}
}

// ?, # and % in a --db path are part of the file name, not a SQLite URI's query,
// fragment or escape.
func TestScan_dbPathWithURICharacters(t *testing.T) {
	dir := t.TempDir()
	clean := rootSnapshot(t, t.TempDir(), "clean.json", "2026-11-30T12:00:00Z", true, 0)
	db := filepath.Join(dir, "x", "a?b#c%d.db")
	for range 2 {
		if code, _, stderr := warden(t, "", "scan", "--snapshot", clean, "--db", db); code != 0 {
			t.Fatalf("scan: exit %d: %s", code, stderr)
		}
	}
	entries, err := os.ReadDir(filepath.Join(dir, "x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if n := strings.TrimSuffix(strings.TrimSuffix(e.Name(), "-wal"), "-shm"); n != "a?b#c%d.db" {
			t.Errorf("scan wrote %q, want only a?b#c%%d.db", e.Name())
		}
	}
	if code, out, stderr := warden(t, "", "findings", "diff", "--db", db); code != 0 || !strings.Contains(out, "0 new, 0 resolved") {
		t.Errorf("diff of %s: exit %d: %s%s", db, code, out, stderr)
	}
}

// Reading the history of a path that holds none is an error, and creates nothing.
func TestFindingsDiff_missingDBIsNotCreated(t *testing.T) {
	db := filepath.Join(t.TempDir(), "typo", "h.db")
	code, _, stderr := warden(t, "", "findings", "diff", "--db", db)
	if code != exitError || !strings.Contains(stderr, db) || !strings.Contains(stderr, "no scan history") {
		t.Errorf("exit %d, stderr %q; want 2 naming %s", code, stderr, db)
	}
	if _, err := os.Stat(filepath.Dir(db)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("findings diff created %s", filepath.Dir(db))
	}
}

// A PostgreSQL DSN's password never reaches the terminal, whatever form it takes.
func TestScan_dbCredentialsNeverShown(t *testing.T) {
	clean := rootSnapshot(t, t.TempDir(), "clean.json", "2026-11-30T12:00:00Z", true, 0)
	for _, dsn := range []string{
		"postgres://warden:s3cret@127.0.0.1:1/warden?connect_timeout=2",
		"postgres://warden@127.0.0.1:1/warden?password=s3cret&connect_timeout=2",
		"host=127.0.0.1 port=1 user=warden password=s3cret connect_timeout=2",
	} {
		for _, args := range [][]string{{"scan", "--snapshot", clean, "--db", dsn}, {"findings", "diff", "--db", dsn}} {
			code, _, stderr := warden(t, "", args...)
			if code != exitError || strings.Contains(stderr, "s3cret") || !strings.Contains(stderr, "127.0.0.1") {
				t.Errorf("%s --db %s: exit %d, stderr %q; want 2 naming the server without the password", args[0], dsn, code, stderr)
			}
		}
	}
}
