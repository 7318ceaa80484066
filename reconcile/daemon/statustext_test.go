package daemon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/reconcile/daemon"
)

func TestStatus_WriteText(t *testing.T) {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		s    daemon.Status
		want []string
	}{
		{"nobody serves", daemon.Status{}, []string{"none (no warden serve is reconciling)", "running",
			"none (warden audit checkpoint signs one)", "pending approvals:  0", "(empty)"}},
		{"a lapsed leader, paused, a failed scope", daemon.Status{Leader: "replica-a", LeaderUntil: now.Add(-90 * time.Second),
			Paused: true, PausedBy: "bob", PauseReason: "incident 42", Checkpoint: &audit.CheckpointMark{Size: 17, At: now.Add(-time.Hour)},
			Queue:  []daemon.JobCount{{Kind: "sweep", State: "available", Count: 3}},
			Scopes: []daemon.ScopeStatus{{Scope: "aws/1/iam", Status: "failed", Error: "throttled", Resources: 4, ReadAt: now.Add(-time.Minute)}}},
			[]string{"replica-a (term ended 1m30s ago: no replica alive?)", "PAUSED by bob: incident 42", "17 entries, 1h0m0s ago",
				"sweep", "aws/1/iam", "1m0s ago", "never", "throttled"}},
		{"a live leader", daemon.Status{Leader: "replica-b", LeaderUntil: now.Add(time.Minute)}, []string{"replica-b (term until 2026-12-06T12:01:00Z)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := tc.s.WriteText(&b, now); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
		})
	}
}
