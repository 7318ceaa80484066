package config_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/warden-sec/warden/config"
)

// --db wins over the config's db:, which wins over the default path; a nil config is
// no config.
func TestConfig_DSN(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/state")
	for _, tc := range []struct {
		cfg        *config.Config
		flag, want string
	}{
		{&config.Config{DB: "cfg.db"}, "flag.db", "flag.db"},
		{&config.Config{DB: "cfg.db"}, "", "cfg.db"},
		{&config.Config{}, "", "/state/warden/warden.db"},
		{nil, "", "/state/warden/warden.db"},
	} {
		if got, err := tc.cfg.DSN(tc.flag); err != nil || got != tc.want {
			t.Errorf("DSN(%q) of %+v = %q, %v; want %q", tc.flag, tc.cfg, got, err, tc.want)
		}
	}
}

// --waivers wins over the config's waivers:; with neither there are none; an unreadable
// file is an error, not an empty set.
func TestConfig_LoadWaivers(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "waivers.yaml")
	if err := os.WriteFile(file, []byte("waivers:\n  - policy: WARDEN-AWS-NET-001\n    resource: \"*\"\n    reason: test\n    owner: alice\n    expires: 2999-01-01\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ws, err := (&config.Config{Waivers: "missing.yaml"}).LoadWaivers(file); err != nil || ws == nil || len(ws.Waivers) != 1 {
		t.Errorf("the flag's file: %+v, %v", ws, err)
	}
	if ws, err := (&config.Config{}).LoadWaivers(""); err != nil || ws != nil {
		t.Errorf("neither: %+v, %v", ws, err)
	}
	if _, err := (&config.Config{Waivers: filepath.Join(dir, "missing.yaml")}).LoadWaivers(""); err == nil {
		t.Error("a missing waivers: file was not an error")
	}
}

// Without --config the config is empty, never an error.
func TestLoadOptional(t *testing.T) {
	c, err := config.LoadOptional("")
	if err != nil || c == nil || c.DB != "" || c.File != "" {
		t.Errorf("%+v, %v", c, err)
	}
	if _, err := config.LoadOptional(filepath.Join(t.TempDir(), "missing.yaml")); err == nil {
		t.Error("a missing --config file was not an error")
	}
}

// OpenStore opens the history at --db, else db:, else the default; without create, a
// history that does not exist is refused and not made.
func TestConfig_OpenStore(t *testing.T) {
	dir := t.TempDir()
	cfg := &config.Config{DB: filepath.Join(dir, "cfg.db")}
	if _, err := cfg.OpenStore(context.Background(), "", false); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing history without create: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(cfg.DB); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused history was made: %v", err)
	}
	st, err := cfg.OpenStore(context.Background(), filepath.Join(dir, "flag.db"), true)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(dir, "flag.db")); err != nil {
		t.Fatalf("--db was not the history opened: %v", err)
	}
	if _, err := os.Stat(cfg.DB); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("db: was opened although --db was given: %v", err)
	}
}
