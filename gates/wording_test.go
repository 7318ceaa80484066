package gates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store/storetest"
)

// A refusal reads as one plain sentence after a channel's "you cannot approve request
// apr-…:": gates.Reason leaves out the request Decide wraps it in, an expiry says when in
// a readable time and that nobody decided it in time, a second decision when it was
// decided.
func TestDecide_refusalWording(t *testing.T) {
	mk := storetest.Backends(t)["sqlite"]
	cfg := testConfig
	cfg.Expiry = time.Hour
	e := newEnv(t, mk, cfg)
	expiring := e.request("act-1", findings.RiskHigh, "h1")
	decided := e.request("act-2", findings.RiskHigh, "h2")
	decide(e, decided.ID, "bob", true, "")

	_, err := e.gate.Decide(ctx, decided.ID, "carol", "web", true, "")
	want := "already decided (it was approved at 2026-12-01 09:00:00 UTC)"
	if got := gates.Reason(err); got != want {
		t.Errorf("approving an approved request: Reason = %q, want %q", got, want)
	}
	if !strings.HasPrefix(err.Error(), "approve request "+decided.ID+": ") {
		t.Errorf("the error itself no longer says what was refused: %q", err)
	}
	_, err = e.gate.Decide(ctx, decided.ID, "bob", "web", true, "")
	if got, want := gates.Reason(err), "already decided (bob approved it at 2026-12-01 09:00:00 UTC)"; got != want {
		t.Errorf("approving twice: Reason = %q, want %q", got, want)
	}

	e.clock.Advance(time.Hour + 1500*time.Millisecond)
	_, err = e.gate.Decide(ctx, expiring.ID, "carol", "cli", true, "")
	want = "the request expired at 2026-12-01 10:00:00 UTC: nobody decided it in time (0 of 1 approval); run warden apply again to ask anew"
	if got := gates.Reason(err); got != want {
		t.Errorf("deciding after the expiry: Reason = %q, want %q", got, want)
	}
	if got := e.get(expiring.ID).Reason; got != "nobody decided it in time (0 of 1 approval)" {
		t.Errorf("the expired request's reason = %q", got)
	}
	for _, r := range []string{gates.Reason(err), e.get(expiring.ID).Reason} {
		if strings.Contains(r, "unanswered at") || strings.Contains(r, "request "+expiring.ID) {
			t.Errorf("the refusal repeats itself or speaks in timestamps: %q", r)
		}
	}
}
