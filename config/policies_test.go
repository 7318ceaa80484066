package config_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
)

func TestEngine_locatesARefusedSettingInTheConfig(t *testing.T) {
	p := filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(p, []byte("settings:\n  access_key_max_age_days: soon\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cfg.Engine(context.Background(), config.PolicyOptions{})
	if err == nil || !strings.Contains(err.Error(), p+": line 2") || !strings.Contains(err.Error(), "access_key_max_age_days") {
		t.Fatalf("a setting of the wrong type: %v", err)
	}
}

func TestEngine_refusesWhatCannotLoad(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    config.PolicyOptions
		want string
	}{
		{"no policies", config.PolicyOptions{NoBuiltin: true}, "no policies: --no-builtin needs at least one --policies directory"},
		{"a file for a directory", config.PolicyOptions{Dirs: []string{"policies.go"}}, "--policies policies.go: not a directory"},
		{"no time to evaluate", config.PolicyOptions{Limits: &config.EvalLimits{}}, "--eval-timeout: want a positive duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := (&config.Config{}).Engine(context.Background(), tc.o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
