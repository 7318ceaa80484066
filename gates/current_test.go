package gates_test

import (
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store/storetest"
)

// Current expires what is past its expiry before it lists: the pending list leaves it
// out, the full list shows it expired.
func TestCurrent_expiresBeforeListing(t *testing.T) {
	cfg := testConfig
	cfg.Expiry = time.Hour
	e := newEnv(t, storetest.Backends(t)["sqlite"], cfg)
	old := e.request("act-1", findings.RiskMedium, "h1")
	e.clock.Advance(45 * time.Minute)
	fresh := e.request("act-2", findings.RiskMedium, "h1")
	e.clock.Advance(30 * time.Minute)
	pending, err := e.gate.Current(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != fresh.ID {
		t.Errorf("pending: %+v, want only %s", pending, fresh.ID)
	}
	all, err := e.gate.Current(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]gates.State{}
	for _, r := range all {
		states[r.ID] = r.State
	}
	if len(all) != 2 || states[old.ID] != gates.StateExpired || states[fresh.ID] != gates.StatePending {
		t.Errorf("all: %v, want %s expired and %s pending", states, old.ID, fresh.ID)
	}
}
