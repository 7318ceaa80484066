package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/remediate/remediatetest"
)

// warden serve writes the reports: section's reports on its schedule, from the history
// the scans left: one file per framework and format, under the framework's folder.
func TestServe_writesScheduledReports(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "reports")
	cr := startChildRun(t, remediatetest.World(1), "reports:\n  frameworks: [cis-aws-3.0, soc2]\n  formats: [json, html]\n  destination: "+out+"\n  keep: 2\n  every: 1h\n")
	if b, err := cr.warden("scan").CombinedOutput(); err != nil && !strings.Contains(string(b), "finding") {
		t.Fatalf("scan: %v\n%s", err, b)
	}
	// No live target: serve runs no daemon, and still writes its reports.
	s := startServe(t, cr.url, []string{"serve", "--listen", "127.0.0.1:0", "--config", cr.cfg, "--db", cr.db, "--log-level", "info"})
	want := []string{"cis-aws-3.0/*.json", "cis-aws-3.0/*.html", "soc2/*.json", "soc2/*.html"}
	waitFor(t, "the scheduled reports in "+out, func() (string, bool) {
		var got []string
		for _, w := range want {
			m, _ := filepath.Glob(filepath.Join(out, w))
			got = append(got, m...)
		}
		return strings.Join(got, ", "), len(got) == len(want)
	})
	m, _ := filepath.Glob(filepath.Join(out, "cis-aws-3.0", "*.json"))
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	var doc compliance.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", m[0], err)
	}
	if doc.Report == nil || doc.Report.Framework.ID != "cis-aws-3.0" || doc.Source.ScanID == 0 || len(doc.Report.Controls) == 0 {
		t.Errorf("%s: framework %v, scan %d: want the CIS AWS report of the scan", m[0], doc.Report, doc.Source.ScanID)
	}
	if !slices.ContainsFunc(doc.Report.Controls, func(c compliance.ControlResult) bool { return c.Status == compliance.StatusFail }) {
		t.Errorf("%s: no control fails, though the scan found open findings", m[0])
	}
	st, err := os.Stat(m[0])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: mode %v, want 0600 (%v)", m[0], st.Mode().Perm(), err)
	}
	// The summary is logged after the last file is written: wait for it, do not race it.
	waitFor(t, `"scheduled reports written" in serve's log`, func() (string, bool) {
		out := s.output()
		return out, strings.Contains(out, "scheduled reports written")
	})
}

// As a daemon, serve reports from its own state (it writes no scan history): the first
// run finds nothing read yet and waits, then reports once the sweep has read the scopes.
func TestServe_daemonWritesScheduledReportsFromItsState(t *testing.T) {
	out := filepath.Join(t.TempDir(), "reports")
	cr := startChildRun(t, remediatetest.World(1), "gates:\n  auto: [low, medium]\nreports:\n  frameworks: [cis-aws-3.0]\n  formats: [json]\n  destination: "+out+"\n  every: 1h\n")
	s := startServe(t, cr.url, cr.args("serve", "--listen", "127.0.0.1:0", "--schedule", "@every 1h", "--dry-run", "--log-level", "info"))
	file := waitLong(t, "a scheduled report in "+out, 90*time.Second, func() (string, bool) {
		m, _ := filepath.Glob(filepath.Join(out, "cis-aws-3.0", "*.json"))
		if len(m) == 0 {
			return "", false
		}
		return m[0], true
	})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var doc compliance.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if doc.Source.Snapshot != evidence.DaemonSnapshot || doc.Source.Resources == 0 || len(doc.Scopes) == 0 {
		t.Errorf("%s: source %+v, %d scopes: want the daemon's state, with what it read", file, doc.Source, len(doc.Scopes))
	}
	if !slices.ContainsFunc(doc.Report.Controls, func(c compliance.ControlResult) bool { return c.Status == compliance.StatusFail }) {
		t.Errorf("%s: no control fails, though the world holds open SSH and an old key", file)
	}
	wantIn(t, "serve's log", s.output(), "scheduled reports written")
}
