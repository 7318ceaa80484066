package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/remediators/builtin"
)

// PolicyOptions choose the policies a command compiles beyond the config's policies:
// directories, and bound their evaluation.
type PolicyOptions struct {
	// Dirs are more directories of Rego policies (--policies).
	Dirs []string
	// NoBuiltin leaves out the built-in policies; their library stays for the others.
	NoBuiltin bool
	// Baseline evaluates as before issue 13 (engine.Config.Baseline).
	Baseline bool
	// Limits, when set, bound each evaluation; nil leaves the engine's defaults.
	Limits *EvalLimits
	// Catalog is the remediation actions the policies are checked against; nil means
	// the built-in remediators', whatever the command.
	Catalog map[string][]remediators.Param
	Logger  *slog.Logger
}

// EvalLimits bound one policy evaluation on one resource, and the process's heap.
type EvalLimits struct {
	EvalTimeout time.Duration
	MemoryLimit int64
}

// Engine compiles the built-in pack (unless NoBuiltin), the config's policies:
// directories and o.Dirs, with the config's settings. A setting the policies refuse is
// reported at its line in the config file.
func (c *Config) Engine(ctx context.Context, o PolicyOptions) (*engine.Engine, error) {
	sources := []engine.Source{engine.Builtin()}
	if o.NoBuiltin {
		sources = []engine.Source{engine.BuiltinLibrary()}
	}
	for _, dir := range append(append([]string{}, c.Policies...), o.Dirs...) {
		st, err := os.Stat(dir)
		if err != nil {
			return nil, fmt.Errorf("--policies: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("--policies %s: not a directory", dir)
		}
		sources = append(sources, engine.Source{FS: os.DirFS(dir), Prefix: dir})
	}
	if len(sources) == 1 && o.NoBuiltin {
		return nil, errors.New("no policies: --no-builtin needs at least one --policies directory")
	}
	catalog := o.Catalog
	if catalog == nil {
		reg, err := builtin.Registry(nil, nil)
		if err != nil {
			return nil, err
		}
		catalog = reg.Catalog()
	}
	ec := engine.Config{Sources: sources, Settings: c.Settings, Logger: o.Logger, Actions: engineCatalog(catalog), Baseline: o.Baseline}
	if o.Limits != nil {
		if o.Limits.EvalTimeout <= 0 {
			return nil, errors.New("--eval-timeout: want a positive duration such as 10s")
		}
		ec.EvalTimeout, ec.MemoryLimit = o.Limits.EvalTimeout, o.Limits.MemoryLimit
	}
	e, err := engine.New(ctx, ec)
	if se, ok := err.(*engine.SettingsError); ok {
		// Settings are judged against the policies; the config knows their lines.
		var located error
		for _, s := range se.Errors {
			if e := c.SettingError(s.Name, s.Path, s.Msg); located == nil {
				located = e
			} else {
				located = fmt.Errorf("%w\n%w", located, e)
			}
		}
		return nil, located
	}
	if err != nil {
		return nil, fmt.Errorf("load policies:\n%w", err)
	}
	return e, nil
}

// engineCatalog is the remediators' catalog as the engine checks policies against it.
func engineCatalog(c map[string][]remediators.Param) map[string][]engine.ActionParam {
	out := make(map[string][]engine.ActionParam, len(c))
	for name, ps := range c {
		aps := make([]engine.ActionParam, 0, len(ps))
		for _, p := range ps {
			aps = append(aps, engine.ActionParam{Name: p.Name, Required: p.Required})
		}
		out[name] = aps
	}
	return out
}
