package env_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
	acmefixture "github.com/warden-sec/warden/fixtures/acme"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate/env"
)

// acmeWorld writes the acme world where the simulator can serve it.
func acmeWorld(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "world.yaml")
	if err := os.WriteFile(p, acmefixture.World(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A plan changes nothing: its environment reads the clouds but opens no store.
func TestOpen_withoutAStoreForPlanning(t *testing.T) {
	e, err := env.Open(context.Background(), env.Options{Config: &config.Config{}, Sim: acmeWorld(t), Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Store != nil || e.Log != nil || e.Gate != nil {
		t.Errorf("a store was opened without a DB: %+v", e)
	}
	if e.Sim == nil || e.Targets.AWS == nil || e.Targets.AWS.Endpoint != e.Sim.URL || e.Targets.GCP == nil {
		t.Fatalf("the targets are not the simulator's: %+v", e.Targets)
	}
	if e.Clouds.Sessions == nil || e.Clouds.GCP == nil || len(e.Clouds.Readers) != 3 {
		t.Errorf("clouds: sessions %v, GCP %v, %d readers; want both and AWS, GCP and TLS readers", e.Clouds.Sessions != nil, e.Clouds.GCP != nil, len(e.Clouds.Readers))
	}
	if len(e.Engine.Policies()) == 0 || len(e.Registry.Catalog()) == 0 {
		t.Errorf("%d policies, %d remediators", len(e.Engine.Policies()), len(e.Registry.Catalog()))
	}
	if o := e.MachineOptions(nil); o.Actor != "alice" || o.Observer == nil || len(o.Versions) == 0 {
		t.Errorf("machine options: actor %q, observer %v, %d version events", o.Actor, o.Observer, len(o.Versions))
	}
}

func TestOpen_withAStoreToApply(t *testing.T) {
	db := filepath.Join(t.TempDir(), "warden.db")
	e, err := env.Open(context.Background(), env.Options{Config: &config.Config{}, Sim: acmeWorld(t), DB: db, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if e.Store == nil || e.Log == nil || e.Gate == nil {
		t.Fatalf("store %v, log %v, gate %v", e.Store != nil, e.Log != nil, e.Gate != nil)
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("the store was not made: %v", err)
	}
}

func TestOpen_refusesAPolicyDirThatIsNone(t *testing.T) {
	_, err := env.Open(context.Background(), env.Options{Config: &config.Config{},
		Policies: config.PolicyOptions{Dirs: []string{filepath.Join(t.TempDir(), "missing")}}})
	if err == nil {
		t.Fatal("a missing --policies directory was accepted")
	}
}

// A dry run opens the database only if it exists: a missing one is not created, an
// empty one in memory stands in, and NoDB says so; an existing one is the one opened.
func TestOpen_dryRunCreatesNoDatabase(t *testing.T) {
	db := filepath.Join(t.TempDir(), "state", "warden.db")
	e, err := env.Open(context.Background(), env.Options{Config: &config.Config{}, DB: db, DryRun: true, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if e.Store == nil || e.Gate == nil || !strings.Contains(e.NoDB, "no database at "+db) {
		t.Errorf("store %v, gate %v, NoDB %q: want an empty stand-in, said so", e.Store != nil, e.Gate != nil, e.NoDB)
	}
	var note strings.Builder
	e.Notice(&note)
	if note.String() != e.NoDB+"\n" {
		t.Errorf("Notice wrote %q", note.String())
	}
	e.Close()
	if _, err := os.Stat(filepath.Dir(db)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the dry run made the database's folder: %v", err)
	}

	made, err := env.Open(context.Background(), env.Options{Config: &config.Config{}, DB: db, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	made.Close()
	again, err := env.Open(context.Background(), env.Options{Config: &config.Config{}, DB: db, DryRun: true, Actor: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.NoDB != "" {
		t.Errorf("an existing database: NoDB %q", again.NoDB)
	}
}

// Approvers without gates.signers: every apply says that decisions are unchecked names;
// with signers, or with nobody who may decide, it says nothing of it.
func TestNotice_saysDecisionsAreUnchecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gates gates.Config
		warn  bool
	}{
		{"unchecked names", gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, true},
		{"no approvers", gates.Config{}, false},
		{"signers", gates.Config{Approvers: []string{"bob"}, Signers: map[string][]string{"bob": {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := env.Open(context.Background(), env.Options{Config: &config.Config{Gates: tc.gates}, Actor: "alice"})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			var note strings.Builder
			e.Notice(&note)
			if got := strings.Contains(note.String(), "decisions are unchecked names") && strings.Contains(note.String(), "gates.signers"); got != tc.warn {
				t.Errorf("Notice wrote %q, want the warning: %v", note.String(), tc.warn)
			}
		})
	}
}
