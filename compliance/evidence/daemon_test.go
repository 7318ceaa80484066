package evidence_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/compliance"
	"github.com/warden-sec/warden/compliance/evidence"
	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/reconcile"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

const (
	// oldKey is acme-main's old, unused access key: WARDEN-AWS-IAM-007 and -008 (CIS
	// 1.12 and 1.14).
	oldKey = "AKIAJCMJL3DFEHCEV2RP"
	// devIAM is acme-dev's IAM scope, which the tests make fail to read.
	devIAM = "aws/222222222222/iam"
)

// builtinPack compiles the built-in policy pack.
func builtinPack(t *testing.T) *engine.Engine {
	t.Helper()
	eng, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// daemon is a store written by the daemon's reconciler, reading the acme organisation
// at times the test chooses.
type daemon struct {
	t   *testing.T
	st  *store.Store
	log *audit.Log
	r   *reconcile.Reconciler
	h   snapshot.Header
	rs  []snapshot.Resource
	// now is the audit log's clock: the time of the read being observed.
	now time.Time
}

func newDaemon(t *testing.T, dsn string, eng *engine.Engine) *daemon {
	t.Helper()
	f, err := os.Open(acmeSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, rs, err := snapshot.ReadAll(f, "snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{t: t, st: storetest.Open(t, dsn), h: h, rs: rs}
	d.log = audit.New(d.st, audit.Options{Now: d.clock})
	d.r = reconcile.New(reconcile.Options{Store: d.st, Log: d.log, Engine: eng, Now: d.clock})
	return d
}

func (d *daemon) clock() time.Time { return d.now }

// read is the scope's part of the acme snapshot, as a read of it at the time would
// return it.
func (d *daemon) read(scope string, at time.Time) reconcile.Observation {
	d.t.Helper()
	sc, ok := d.h.ScopeByID(scope)
	if !ok {
		d.t.Fatalf("acme has no scope %s", scope)
	}
	ob := reconcile.Observation{Scope: sc, Accounts: d.h.Accounts, At: at}
	for _, r := range d.rs {
		if r.Scope == scope {
			ob.Resources = append(ob.Resources, r)
		}
	}
	return ob
}

func (d *daemon) observe(ob reconcile.Observation) *reconcile.Outcome {
	d.t.Helper()
	d.now = ob.At
	out, err := d.r.Observe(context.Background(), ob)
	if err != nil {
		d.t.Fatalf("observe %s: %v", ob.Scope.ID, err)
	}
	return out
}

// readAll reads every scope of acme at the time, as the daemon's first sweep does.
func (d *daemon) readAll(at time.Time) {
	d.t.Helper()
	for _, sc := range d.h.Scopes {
		d.observe(d.read(sc.ID, at))
	}
}

// withKeyDeactivated is the read with access key keyID made Inactive.
func withKeyDeactivated(t *testing.T, ob reconcile.Observation, keyID string) reconcile.Observation {
	t.Helper()
	ob.Resources = slices.Clone(ob.Resources)
	for i, r := range ob.Resources {
		if r.Type == "aws.iam.access_key" && r.Attributes["access_key_id"] == keyID {
			attrs := maps.Clone(r.Attributes)
			attrs["status"] = "Inactive"
			ob.Resources[i].Attributes = attrs
			return ob
		}
	}
	t.Fatalf("no access key %s in the read of %s", keyID, ob.Scope.ID)
	return ob
}

// failedRead is a read of the scope that was denied: no resources.
func failedRead(ob reconcile.Observation, message string) reconcile.Observation {
	ob.Scope.Status, ob.Scope.Error, ob.Scope.Resources, ob.Resources = snapshot.ScopeFailed, message, 0, nil
	return ob
}

// failsOnKey reports whether a control has a failing finding on access key keyID.
func failsOnKey(c compliance.ControlResult, keyID string) bool {
	return slices.ContainsFunc(c.Failing, func(f findings.Finding) bool { return strings.HasSuffix(f.Resource, "/accesskey/"+keyID) })
}

// typesOf maps each policy of the engine to its resource types.
func typesOf(eng *engine.Engine) map[string][]string {
	out := map[string][]string{}
	for _, p := range eng.Policies() {
		out[p.ID] = p.ResourceTypes
	}
	return out
}

// The daemon reads acme, deactivates an old access key two days later and fails to read
// acme-dev's IAM an hour after that: the report at each time stands on the daemon's
// state as it was then, and its trend and convergence on the findings' lives.
func TestGather_daemonState(t *testing.T) {
	eng := builtinPack(t)
	fw := cisAWS(t)
	mine := map[string]bool{}
	for _, c := range fw.Controls {
		for _, p := range c.Policies {
			mine[p] = true
		}
	}
	types := typesOf(eng)
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			d := newDaemon(t, dsn(t), eng)
			t1 := day0.Add(time.Hour)
			t2 := t1.Add(48 * time.Hour)
			t3 := t2.Add(time.Hour)
			// The reports are made as time goes on, a minute after each read (now), and
			// again after the last read of a time before it.
			var now time.Time
			opts := evidence.ForEngine(eng, nil, "warden test")
			opts.Now = func() time.Time { return now }
			gather := func(at time.Time) *compliance.Document {
				t.Helper()
				o := opts
				o.At = at
				doc, err := evidence.Gather(ctx, d.st, d.log, fw, o)
				if err != nil {
					t.Fatalf("Gather at %s: %v", at, err)
				}
				if doc.Source.Snapshot != evidence.DaemonSnapshot || doc.Source.ScanID != 0 {
					t.Fatalf("Gather at %s without a scan: source %+v, want the daemon's state", at, doc.Source)
				}
				return doc
			}

			// After the first read: the old key fails 1.14 on the access keys as read.
			d.readAll(t1)
			now = t1.Add(time.Minute)
			d1 := gather(t1)
			if want := (compliance.Source{Snapshot: evidence.DaemonSnapshot, CollectedAt: t1, Resources: len(d.rs), Policies: len(eng.Policies())}); d1.Source != want {
				t.Errorf("source at the first read: %+v, want %+v", d1.Source, want)
			}
			if !d1.Report.At.Equal(t1) || d1.Tool != "warden test" || !d1.Generated.Equal(now) {
				t.Errorf("report at %s, tool %q, generated %s", d1.Report.At, d1.Tool, d1.Generated)
			}
			if len(d1.Trend) != 1 || !d1.Trend[0].At.Equal(t1) || !reflect.DeepEqual(d1.Trend[0].Score, d1.Report.Score) {
				t.Errorf("trend at the first read: %+v, want the report alone", d1.Trend)
			}
			c114 := control(t, d1, "1.14")
			if !failsOnKey(c114, oldKey) {
				t.Errorf("1.14 at the first read: %s (%s), want failing on key %s", c114.Status, c114.Reason, oldKey)
			}
			// 1.14 is users' keys (WARDEN-AWS-IAM-008, on access keys) and root's
			// (WARDEN-AWS-IAM-040, on root users).
			keys, roots := 0, 0
			for _, r := range d.rs {
				switch r.Type {
				case "aws.iam.access_key":
					keys++
				case "aws.iam.root_user":
					roots++
				}
			}
			want := map[string]int{"WARDEN-AWS-IAM-008": keys, "WARDEN-AWS-IAM-040": roots}
			if len(c114.Runs) != len(want) {
				t.Errorf("1.14's runs: %+v, want one of each of %v", c114.Runs, want)
			}
			for _, run := range c114.Runs {
				if n, ok := want[run.Policy]; !ok || run.Resources != n || len(run.FailedScopes) != 0 || run.Unknown != 0 {
					t.Errorf("1.14's run: %+v, want %d resources, all judged, at the first read", run, n)
				}
			}

			key, _, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
			if err != nil {
				t.Fatal(err)
			}
			d.now = t1.Add(30 * time.Minute)
			cp, err := audit.New(d.st, audit.Options{Signer: key, Now: d.clock}).Checkpoint(ctx)
			if err != nil {
				t.Fatal(err)
			}

			// Two days later the old key is deactivated: its findings resolve.
			fixed := d.observe(withKeyDeactivated(t, d.read("aws/111111111111/iam", t2), oldKey))
			var resolved int
			for _, fs := range fixed.Resolved {
				if mine[fs.Finding.Policy] {
					resolved++
				}
				if fs.Finding.Policy == "WARDEN-AWS-IAM-025" {
					continue // the root's last use leaves the one-day window by t2, change or not
				}
				if !strings.HasSuffix(fs.Finding.Resource, "/accesskey/"+oldKey) {
					t.Errorf("deactivating %s resolved %s on %s", oldKey, fs.Finding.Policy, fs.Finding.Resource)
				}
			}
			if resolved == 0 {
				t.Fatalf("deactivating %s resolved no finding of CIS's policies: %+v", oldKey, fixed.Resolved)
			}
			now = t2.Add(time.Minute)
			// Just before, its findings still stood: a finding resolved after the
			// report's time was open at it. The checkpoint signed after the first read is
			// this report's, not the first's.
			before := gather(t2.Add(-time.Nanosecond))
			if c := control(t, before, "1.14"); !failsOnKey(c, oldKey) {
				t.Errorf("1.14 just before the deactivation: %s (%s), want failing on key %s", c.Status, c.Reason, oldKey)
			}
			if !before.Source.CollectedAt.Equal(t1) {
				t.Errorf("collected at %s just before the second read, want the first read's %s", before.Source.CollectedAt, t1)
			}
			if before.Checkpoint == nil || before.Checkpoint.Note != string(cp) {
				t.Errorf("checkpoint before the second read: %+v, want the one signed after the first", before.Checkpoint)
			}
			if again := gather(t1); again.Checkpoint != nil {
				t.Errorf("checkpoint %+v at the first read, signed after it", again.Checkpoint)
			}
			// At the deactivation: no longer evidence against 1.14.
			d2 := gather(t2)
			if c := control(t, d2, "1.14"); failsOnKey(c, oldKey) {
				t.Errorf("1.14 at the deactivation still fails on key %s: %s", oldKey, c.Reason)
			}
			if !d2.Source.CollectedAt.Equal(t2) {
				t.Errorf("collected at %s at the second read", d2.Source.CollectedAt)
			}

			// An hour later acme-dev's IAM fails to read: the controls of IAM resources
			// that passed are unknown, naming the scope; the scopes say what failed and
			// why.
			const denied = "AccessDenied: iam:GetAccountAuthorizationDetails denied by the test"
			d.observe(failedRead(d.read(devIAM, t3), denied))
			now = t3.Add(time.Minute)
			d3 := gather(t3)
			if !d3.Source.CollectedAt.Equal(t3) || d3.Source.Resources != len(d.rs) {
				t.Errorf("source after the failed read: %+v, want collected at %s, every resource kept", d3.Source, t3)
			}
			if len(d3.Scopes) != len(d.h.Scopes) {
				t.Errorf("%d scopes, want acme's %d", len(d3.Scopes), len(d.h.Scopes))
			}
			byID := map[string]compliance.Scope{}
			for _, s := range d3.Scopes {
				byID[s.ID] = s
			}
			if len(d3.Scopes) < 3 || d3.Scopes[0].ID != devIAM || d3.Scopes[1].ID != "aws/333333333333/ec2/eu-central-1" || d3.Scopes[2].Status != snapshot.ScopeOK {
				t.Errorf("scopes %+v, want the two failed ones first", d3.Scopes)
			}
			if s := byID[devIAM]; s.Status != snapshot.ScopeFailed || s.Error != denied {
				t.Errorf("scope %s: %+v, want failed with its error", devIAM, s)
			}
			if s := byID["aws/333333333333/ec2/eu-central-1"]; !strings.HasPrefix(s.Error, "AccessDenied: ec2:DescribeSecurityGroups") {
				t.Errorf("acme's failed EC2 region: %+v, want its error", s)
			}
			if s := byID["aws/111111111111/iam"]; s.Status != snapshot.ScopeOK || s.Resources != 76 || s.Error != "" {
				t.Errorf("acme-main's IAM: %+v, want ok with its 76 resources", s)
			}
			iam := func(c compliance.ControlResult) bool {
				return slices.ContainsFunc(c.Policies, func(p string) bool {
					return slices.ContainsFunc(types[p], func(t string) bool { return strings.HasPrefix(t, "aws.iam.") })
				})
			}
			// onlyDev reports whether a control failed on acme-dev's IAM alone: it fails
			// on nothing once that scope is unread, and cannot pass.
			onlyDev := func(c compliance.ControlResult) bool {
				return iam(c) && len(c.Failing) > 0 && !slices.ContainsFunc(c.Failing, func(f findings.Finding) bool { return f.Scope != devIAM })
			}
			checkUnread := func(when string, before, after *compliance.Document) {
				t.Helper()
				n := 0
				for _, c := range before.Report.Controls {
					if !onlyDev(c) {
						continue
					}
					n++
					got := control(t, after, c.ID)
					if got.Status != compliance.StatusUnknown || !strings.Contains(got.Reason, "scopes not read: "+devIAM) || len(got.Unknown) != len(c.Failing) {
						t.Errorf("%s: %s failed on %s alone, and with it unread is %s (%s), %d findings unknown; want unknown naming the scope, %d unknown",
							when, c.ID, devIAM, got.Status, got.Reason, len(got.Unknown), len(c.Failing))
					}
				}
				if n == 0 {
					t.Errorf("%s: no control failed on %s alone before it failed to read: the test shows nothing", when, devIAM)
				}
				for _, c := range after.Report.Controls {
					for _, r := range c.Runs {
						if slices.ContainsFunc(types[r.Policy], func(t string) bool { return strings.HasPrefix(t, "aws.iam.") }) && !slices.Contains(r.FailedScopes, devIAM) {
							t.Errorf("%s: %s of %s ran over %s without naming it failed: %+v", when, r.Policy, c.ID, devIAM, r.PolicyRun)
						}
						if c.Status == compliance.StatusPass && len(r.FailedScopes) > 0 {
							t.Errorf("%s: control %s passes although %s ran over failed scopes %v", when, c.ID, r.Policy, r.FailedScopes)
						}
					}
				}
			}
			checkUnread("after the failed read", d2, d3)

			// Made now, the reports of earlier times keep what the state still tells of
			// them: the key failed before its deactivation and not after. The scope is as
			// last read, failed: what it held is unknown then too, never passing.
			if c := control(t, gather(t2.Add(-time.Nanosecond)), "1.14"); !failsOnKey(c, oldKey) {
				t.Errorf("1.14 just before the deactivation, reported after the failed read: %s (%s)", c.Status, c.Reason)
			}
			late := gather(t2)
			if c := control(t, late, "1.14"); failsOnKey(c, oldKey) {
				t.Errorf("1.14 at the deactivation, reported after the failed read, fails on key %s", oldKey)
			}
			checkUnread("at the deactivation, reported after the failed read", d2, late)

			// A point a day up to the report, none before the first read: the last is
			// the report, each the report made at its time.
			wantAt := []time.Time{t3.Add(-48 * time.Hour), t3.Add(-24 * time.Hour), t3}
			var gotAt []time.Time
			for _, p := range d3.Trend {
				gotAt = append(gotAt, p.At)
				if p.ScanID != 0 {
					t.Errorf("trend point at %s has scan %d", p.At, p.ScanID)
				}
			}
			if !slices.EqualFunc(gotAt, wantAt, time.Time.Equal) {
				t.Fatalf("trend at %v, want %v", gotAt, wantAt)
			}
			if last := d3.Trend[2]; !reflect.DeepEqual(last.Score, d3.Report.Score) {
				t.Errorf("the trend's last point %+v is not the report's score %+v", last.Score, d3.Report.Score)
			}
			if mid := gather(wantAt[1]); !reflect.DeepEqual(d3.Trend[1], mid.Trend[len(mid.Trend)-1]) {
				t.Errorf("trend point at %s: %+v, the report then: %+v", wantAt[1], d3.Trend[1], mid.Trend[len(mid.Trend)-1])
			}
			if !maps.Equal(d3.Trend[0].Open, d3.Trend[1].Open) {
				t.Errorf("open findings went from %v to %v with nothing read between", d3.Trend[0].Open, d3.Trend[1].Open)
			}

			// The key's findings resolved after the two days they were open; the oldest
			// open finding dates from the first read.
			c := d3.Convergence
			if c.Resolved != resolved || c.MedianOpen != 48*time.Hour || c.P90Open != 48*time.Hour {
				t.Errorf("convergence %+v, want %d resolved after 48h", c, resolved)
			}
			if c.Open == 0 || c.OldestOpen != t3.Sub(t1) {
				t.Errorf("convergence %+v, want open findings, the oldest %s old", c, t3.Sub(t1))
			}
		})
	}
}

// recordScan scans a snapshot file into the history as warden scan does, evaluated at
// its collection time, and returns the scan as stored.
func recordScan(t *testing.T, st *store.Store, eng *engine.Engine, path string, collected time.Time) store.ScanRecord {
	t.Helper()
	res, err := scan.Run(context.Background(), scan.Request{Source: scan.File(path), Engine: eng, Store: st, Now: collected, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	scans, err := st.Scans(context.Background(), 1)
	if err != nil || len(scans) != 1 || scans[0].ID != res.Scan.ID {
		t.Fatalf("latest scan %+v, %v: want scan %d", scans, err, res.Scan.ID)
	}
	return scans[0]
}

// Gather takes the evidence from whichever read the world more recently, the daemon or
// the history's scan at the report's time, unless told which.
func TestGather_daemonOrHistory(t *testing.T) {
	eng := builtinPack(t)
	fw := cisAWS(t)
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			url := dsn(t)
			d := newDaemon(t, url, eng)
			var now time.Time
			gather := func(source string, at time.Time) (*compliance.Document, error) {
				return evidence.Gather(ctx, d.st, d.log, fw, evidence.Options{At: at, Policies: eng.Policies(), Source: source,
					Now: func() time.Time { return now }})
			}
			read := day0.Add(time.Hour)
			now = read.Add(time.Minute)

			// Nothing read yet: the history's error, as before the daemon; the daemon's
			// state, asked for, says it holds nothing.
			if _, err := gather(evidence.SourceAuto, time.Time{}); !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "holds no scan") {
				t.Errorf("empty store: %v, want the history's error", err)
			}
			if _, err := gather(evidence.SourceDaemon, time.Time{}); !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "daemon's state holds no scope") {
				t.Errorf("empty daemon state: %v", err)
			}

			d.readAll(read)
			// No scan at all: the daemon's state.
			doc, err := gather(evidence.SourceAuto, time.Time{})
			if err != nil || doc.Source.Snapshot != evidence.DaemonSnapshot || !doc.Source.CollectedAt.Equal(read) {
				t.Fatalf("no scan, the daemon read at %s: %+v, %v; want the daemon's state", read, sourceOf(doc), err)
			}
			if _, err := gather(evidence.SourceHistory, time.Time{}); !errors.Is(err, store.ErrNoScans) {
				t.Errorf("the history asked for, none recorded: %v", err)
			}
			// Before the daemon's first read: nothing to report on, said with the time.
			_, err = gather(evidence.SourceAuto, day0)
			if !errors.Is(err, store.ErrNoScans) || !strings.Contains(err.Error(), "no read by then: its first was at "+read.Format(time.RFC3339)) {
				t.Errorf("before the first read: %v", err)
			}

			// A scan of a snapshot collected before the daemon read, recorded after:
			// the daemon's read is the more recent.
			old := recordScan(t, d.st, eng, acmeDay(t, 0), day0)
			now = old.FinishedAt.Add(time.Minute)
			if doc, err = gather(evidence.SourceAuto, time.Time{}); err != nil || doc.Source.Snapshot != evidence.DaemonSnapshot {
				t.Errorf("a scan collected at %s, the daemon read at %s: %+v, %v; want the daemon's state", day0, read, sourceOf(doc), err)
			}
			if doc, err = gather(evidence.SourceHistory, time.Time{}); err != nil || doc.Source.ScanID != old.ID {
				t.Errorf("the history asked for: %+v, %v; want scan %d", sourceOf(doc), err, old.ID)
			}

			// A scan collected after the daemon's read: the history, at times after it
			// finished; before, still the daemon.
			newer := recordScan(t, d.st, eng, acmeDay(t, 2), day0.AddDate(0, 0, 2))
			now = newer.FinishedAt.Add(time.Minute)
			doc, err = gather(evidence.SourceAuto, time.Time{})
			if err != nil || doc.Source.ScanID != newer.ID || !doc.Source.CollectedAt.Equal(day0.AddDate(0, 0, 2)) {
				t.Errorf("a scan collected after the daemon's read: %+v, %v; want scan %d", sourceOf(doc), err, newer.ID)
			}
			if doc, err = gather(evidence.SourceAuto, newer.FinishedAt.Add(-time.Nanosecond)); err != nil || doc.Source.Snapshot != evidence.DaemonSnapshot {
				t.Errorf("before the newer scan finished: %+v, %v; want the daemon's state", sourceOf(doc), err)
			}
			if doc, err = gather(evidence.SourceDaemon, time.Time{}); err != nil || doc.Source.Snapshot != evidence.DaemonSnapshot || doc.Source.ScanID != 0 {
				t.Errorf("the daemon asked for: %+v, %v", sourceOf(doc), err)
			}
			if _, err := gather("scans", time.Time{}); err == nil || !strings.Contains(err.Error(), `unknown source "scans"`) {
				t.Errorf("an unknown source: %v", err)
			}
		})
	}
}

// sourceOf is a document's source, for messages about a document that may be nil.
func sourceOf(doc *compliance.Document) any {
	if doc == nil {
		return nil
	}
	return doc.Source
}
