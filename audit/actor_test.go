package audit_test

import (
	"testing"

	"github.com/warden-sec/warden/audit"
)

func TestCurrentActor(t *testing.T) {
	t.Setenv(audit.ActorEnv, "  carol ")
	if a, err := audit.CurrentActor(); err != nil || a != "carol" {
		t.Errorf("CurrentActor() = %q, %v; want carol from $WARDEN_ACTOR", a, err)
	}
	t.Setenv(audit.ActorEnv, "")
	if a, err := audit.CurrentActor(); err != nil || a == "" {
		t.Errorf("CurrentActor() without $WARDEN_ACTOR = %q, %v; want the OS user name", a, err)
	}
}
