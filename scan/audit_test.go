package scan_test

import (
	"context"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/scan"
	"github.com/warden-sec/warden/store"
)

// Each recorded scan leaves scan.recorded, one finding.opened per new finding and one
// finding.resolved per finding gone from a scope read in full; a finding of an unread
// scope is neither. The policy pack and the config are recorded when they change.
func TestAudit_recordsTheScanItsFindingsAndVersions(t *testing.T) {
	backends(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		l := audit.New(st, audit.Options{})
		eng := testEngine(t)
		run := func(name, snapshot, configVersion string) {
			t.Helper()
			_, err := scan.Run(ctx, scan.Request{Source: scan.Reader(strings.NewReader(snapshot), name), Engine: eng, Store: st,
				Recorded: scan.Audit(l, "alice", scan.VersionEvents(eng, "warden.yaml", configVersion)...)})
			if err != nil {
				t.Fatalf("scan %s: %v", name, err)
			}
		}
		run("monday", snap("2026-11-30T12:00:00Z", []string{},
			root{"111111111111", false, 0}, root{"222222222222", false, 0}, root{"333333333333", false, 0}), "sha256:c1")
		// 222… cannot be read; 333… was fixed; the config is the same.
		run("tuesday", snap("2026-12-01T12:00:00Z", []string{"222222222222"},
			root{"111111111111", false, 0}, root{"333333333333", true, 0}), "sha256:c1")
		// Nothing changed but the config.
		run("wednesday", snap("2026-12-02T12:00:00Z", []string{"222222222222"},
			root{"111111111111", false, 0}, root{"333333333333", true, 0}), "sha256:c2")

		entries, err := l.Entries(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range entries {
			if e.Actor != "alice" {
				t.Errorf("entry %d %s: actor %q, want alice", e.Seq, e.Kind, e.Actor)
			}
			s := e.Kind
			switch e.Kind {
			case audit.KindFindingOpened, audit.KindFindingResolved:
				s += " " + between(string(e.Data), `"policy":"`, `"`) + " " + between(string(e.Data), `"resource":"arn:aws:iam::`, `:root"`)
			case audit.KindConfig:
				s += " " + e.Subject
			case audit.KindPolicyPack:
				if e.Subject != eng.Version() {
					t.Errorf("policy.pack subject %q, want %q", e.Subject, eng.Version())
				}
			}
			got = append(got, s)
		}
		want := []string{
			"policy.pack", "config.loaded sha256:c1",
			"scan.recorded", "finding.opened TEST-ROOT-001 111111111111", "finding.opened TEST-ROOT-001 222222222222", "finding.opened TEST-ROOT-001 333333333333",
			// With MFA on, 333… has the low finding instead.
			"scan.recorded", "finding.opened TEST-LOW-001 333333333333", "finding.resolved TEST-ROOT-001 333333333333",
			"config.loaded sha256:c2", "scan.recorded",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if rep, err := l.Verify(ctx, nil); err != nil || rep.Entries != int64(len(want)) {
			t.Errorf("verify: %+v, %v", rep, err)
		}
	})
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i+len(from):]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
