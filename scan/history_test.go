package scan_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

// taggedPolicy finds every IAM user tagged bad=yes: a user keeps or loses its finding
// by its tag alone, whatever else its scope holds.
const taggedPolicy = `# METADATA
# title: Tagged bad
# custom:
#   id: TEST-TAG-001
#   severity: high
#   resource_types: [aws.iam.user]
#   remediation: {action: notify, risk: none}
package test.tag

deny contains "tagged bad" if input.resource.tags.bad == "yes"
`

// user is an IAM user of an account, with the finding of taggedPolicy when bad.
type user struct {
	account, name string
	bad           bool
}

func (u user) uid() string { return fmt.Sprintf("arn:aws:iam::%s:user/%s", u.account, u.name) }

// scopedSnap is a snapshot collected at `at` declaring the IAM scope of each account in
// scopes with its status (an account left out is not declared at all), and holding users.
func scopedSnap(at string, scopes map[string]string, users ...user) string {
	var ss, rs []string
	for _, acct := range slices.Sorted(maps.Keys(scopes)) {
		ss = append(ss, fmt.Sprintf(`{"id": "aws/%[1]s/iam", "provider": "aws", "account": "%[1]s", "service": "iam", "status": %[2]q}`, acct, scopes[acct]))
	}
	for _, u := range users {
		tag := "no"
		if u.bad {
			tag = "yes"
		}
		rs = append(rs, fmt.Sprintf(`{"uid": %q, "type": "aws.iam.user", "name": %q, "account": %q, "region": "global", "tags": {"bad": %q}, "attributes": {}}`,
			u.uid(), u.name, u.account, tag))
	}
	return `{"version": 1, "collected_at": "` + at + `", "resources": [` + strings.Join(rs, ",\n") +
		`], "scopes": [` + strings.Join(ss, ",\n") + `]}`
}

// resolved is the state, in the history, of a finding the latest scan no longer holds.
const resolved = "resolved"

// latestStates reads back from the store the state of each finding of the latest scan,
// by resource; a finding it does not hold is resolved.
func latestStates(t *testing.T, st *store.Store) (store.ScanRecord, map[string]findings.Finding) {
	t.Helper()
	ctx := context.Background()
	scans, err := st.Scans(ctx, 1)
	if err != nil || len(scans) != 1 {
		t.Fatalf("latest scan: %v, %v", scans, err)
	}
	fs, err := st.Findings(ctx, scans[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]findings.Finding{}
	for _, f := range fs {
		if _, dup := out[f.Resource]; dup {
			t.Fatalf("scan %d holds two findings on %s", scans[0].ID, f.Resource)
		}
		out[f.Resource] = f
	}
	return scans[0], out
}

// The scan history resolves only what a scan could see: a finding is resolved when its
// scope was read in full (ok) and the scan no longer finds it. A scope read in part, a
// scope that failed, and a scope the scan did not cover at all (a narrower run) resolve
// none of their findings: those not found again are carried over as unknown, and a
// later full read opens or resolves them again. A partial read resolves nothing, not
// even the finding of a resource it listed without it, as reconcile/judge.go decides
// (docs/faults.md: the listed resource may lack what the read failed to get). Every
// state is read back from the store: the latest scan's findings, the diff of the last
// two scans, and the finding.resolved entries of the audit log.
func TestRun_historyResolvesOnlyWhatTheScanCouldSee(t *testing.T) {
	const a, b = "111111111111", "222222222222"
	// Monday, everything is read in full: in account a, kept stays bad, fixed is fixed
	// on Tuesday and gone deleted; in account b, which is read in full every time,
	// b-kept stays bad and b-gone is deleted.
	kept, fixed, gone := user{a, "kept", true}, user{a, "fixed", true}, user{a, "gone", true}
	bKept, bGone := user{b, "b-kept", true}, user{b, "b-gone", true}
	monday := scopedSnap("2026-11-30T12:00:00Z", map[string]string{a: "ok", b: "ok"}, kept, fixed, gone, bKept, bGone)
	mondayAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// Wednesday a is read in full again: kept is still bad, fixed is clean, gone is gone.
	wednesday := scopedSnap("2026-12-02T12:00:00Z", map[string]string{a: "ok", b: "ok"}, kept, user{a, "fixed", false}, bKept)

	for _, tc := range []struct {
		name string
		// tuesday is the second scan; b is read in full, bKept kept and bGone deleted.
		tuesday string
		// want is each Monday finding's state after Tuesday: open, unknown or resolved.
		want map[user]string
	}{{
		name:    "ok scope: what is gone or fixed is resolved",
		tuesday: scopedSnap("2026-12-01T12:00:00Z", map[string]string{a: "ok", b: "ok"}, kept, user{a, "fixed", false}, bKept),
		want:    map[user]string{kept: findings.StatusOpen, fixed: resolved, gone: resolved},
	}, {
		name:    "partial scope: nothing resolved, listed or not",
		tuesday: scopedSnap("2026-12-01T12:00:00Z", map[string]string{a: "partial", b: "ok"}, kept, user{a, "fixed", false}, bKept),
		want:    map[user]string{kept: findings.StatusOpen, fixed: findings.StatusUnknown, gone: findings.StatusUnknown},
	}, {
		name:    "failed scope: nothing resolved",
		tuesday: scopedSnap("2026-12-01T12:00:00Z", map[string]string{a: "failed", b: "ok"}, bKept),
		want:    map[user]string{kept: findings.StatusUnknown, fixed: findings.StatusUnknown, gone: findings.StatusUnknown},
	}, {
		name:    "scope not covered by the scan: nothing resolved",
		tuesday: scopedSnap("2026-12-01T12:00:00Z", map[string]string{b: "ok"}, bKept),
		want:    map[user]string{kept: findings.StatusUnknown, fixed: findings.StatusUnknown, gone: findings.StatusUnknown},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			backends(t, func(t *testing.T, st *store.Store) {
				ctx := context.Background()
				eng := newEngine(t, map[string]string{"tag.rego": taggedPolicy})
				log := audit.New(st, audit.Options{})
				run := func(name, snapshot string) {
					t.Helper()
					if _, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snapshot), name), Engine: eng, Store: st,
						Recorded: scan.Audit(log, "test")}); err != nil {
						t.Fatalf("scan %s: %v", name, err)
					}
				}
				want := maps.Clone(tc.want)
				want[bKept], want[bGone] = findings.StatusOpen, resolved

				run("monday", monday)
				if _, got := latestStates(t, st); len(got) != len(want) {
					t.Fatalf("monday: %d findings stored, want %d", len(got), len(want))
				}

				run("tuesday", tc.tuesday)
				rec, got := latestStates(t, st)
				var wantResolved []string
				for u, state := range want {
					f, held := got[u.uid()]
					switch {
					case state == resolved:
						wantResolved = append(wantResolved, u.uid())
						if held {
							t.Errorf("tuesday: %s is %s in the history; want resolved (no longer held)", u.name, f.Status)
						}
					case !held:
						t.Errorf("tuesday: %s is resolved in the history; want %s", u.name, state)
					case f.Status != state || !f.FirstSeen.Equal(mondayAt):
						t.Errorf("tuesday: %s is %s, first seen %s; want %s, first seen on monday", u.name, f.Status, f.FirstSeen, state)
					}
				}
				// The summary kept is the report's: the carried-over unknowns count in it.
				var sum scan.Summary
				if err := json.Unmarshal(rec.Summary, &sum); err != nil {
					t.Fatalf("tuesday's stored summary: %v", err)
				}
				unknown := 0
				for _, f := range got {
					if f.Status == findings.StatusUnknown {
						unknown++
					}
				}
				if sum.Unknown != unknown {
					t.Errorf("tuesday's stored summary counts %d unknown, the history holds %d", sum.Unknown, unknown)
				}
				if len(got) != len(want)-len(wantResolved) {
					t.Errorf("tuesday: the history holds %d findings, want %d: %v", len(got), len(want)-len(wantResolved), got)
				}
				slices.Sort(wantResolved)
				_, _, d, err := scan.DiffLatest(ctx, st)
				if err != nil {
					t.Fatal(err)
				}
				var diffResolved []string
				for _, f := range d.Resolved {
					diffResolved = append(diffResolved, f.Resource)
				}
				slices.Sort(diffResolved)
				if !slices.Equal(diffResolved, wantResolved) {
					t.Errorf("findings diff: resolved %v, want %v", diffResolved, wantResolved)
				}
				if auditResolved := resolvedInAudit(t, log, rec.ID); !slices.Equal(auditResolved, wantResolved) {
					t.Errorf("audit: finding.resolved for %v in scan %d, want %v", auditResolved, rec.ID, wantResolved)
				}

				// A full read of a again vouches for what it finds and resolves the rest.
				run("wednesday", wednesday)
				_, got = latestStates(t, st)
				if f, held := got[kept.uid()]; !held || f.Status != findings.StatusOpen || !f.FirstSeen.Equal(mondayAt) {
					t.Errorf("wednesday: kept is %+v (held %v); want open, first seen on monday", f, held)
				}
				for _, u := range []user{fixed, gone, bGone} {
					if f, held := got[u.uid()]; held {
						t.Errorf("wednesday: %s is %s in the history; want resolved", u.name, f.Status)
					}
				}
			})
		})
	}
}

// resolvedInAudit returns the resources of the finding.resolved entries the audit log
// holds for a scan, sorted.
func resolvedInAudit(t *testing.T, log *audit.Log, scanID int64) []string {
	t.Helper()
	entries, err := log.EntriesOfKind(context.Background(), audit.KindFindingResolved)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		var data struct{ Scan, Resource string }
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("entry %d: %v", e.Seq, err)
		}
		if data.Scan == fmt.Sprintf("scan/%d", scanID) {
			out = append(out, data.Resource)
		}
	}
	slices.Sort(out)
	return out
}
