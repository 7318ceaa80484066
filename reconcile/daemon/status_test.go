package daemon_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/reconcile/daemon"
	"github.com/warden-sec/warden/reconcile/state"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/snapshot"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// ReadStatus reports a database no daemon ran on (no leader, no queue) with what it
// holds: the scopes read, the pause, the last checkpoint; JSON has every list, empty or
// not.
func TestReadStatus(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) { testReadStatus(t, storetest.Open(t, dsn(t))) })
	}
}

func testReadStatus(t *testing.T, st *store.Store) {
	ctx := context.Background()
	s, err := daemon.ReadStatus(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"paused":false,"queue":[],"scopes":[],"pending_approvals":[]}`; string(b) != want {
		t.Errorf("an empty database's status = %s, want %s", b, want)
	}

	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	err = st.InTx(ctx, func(tx *store.Tx) error {
		return state.PutScope(ctx, tx, state.Scope{Scope: snapshot.Scope{ID: "aws/1/iam", Status: snapshot.ScopeFailed,
			Error: "throttled", Resources: 0}, ReadAt: at})
	})
	if err != nil {
		t.Fatal(err)
	}
	signer, _, err := audit.LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	log := audit.New(st, audit.Options{Signer: signer})
	m := remediate.New(remediate.Options{Store: st, Log: log, Actor: "alice"})
	if err := m.SetPause(ctx, true, "change freeze"); err != nil {
		t.Fatal(err)
	}
	if _, err := log.Checkpoint(ctx); err != nil {
		t.Fatal(err)
	}
	if s, err = daemon.ReadStatus(ctx, st); err != nil {
		t.Fatal(err)
	}
	if len(s.Scopes) != 1 || s.Scopes[0] != (daemon.ScopeStatus{Scope: "aws/1/iam", Status: "failed", Error: "throttled", ReadAt: at}) {
		t.Errorf("scopes = %+v", s.Scopes)
	}
	if !s.Paused || s.PausedBy != "alice" || s.PauseReason != "change freeze" {
		t.Errorf("paused %v by %q (%q), want by alice for the change freeze", s.Paused, s.PausedBy, s.PauseReason)
	}
	if s.Checkpoint == nil || s.Checkpoint.Size != 1 || s.Checkpoint.At.IsZero() {
		t.Errorf("last checkpoint = %+v, want one over the pause's entry", s.Checkpoint)
	}
	if b, _ := json.Marshal(s); !strings.Contains(string(b), `"last_checkpoint":{"size":1,"at":"`) {
		t.Errorf("status JSON %s has no last_checkpoint with its size and time", b)
	}
}
