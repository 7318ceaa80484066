package config

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/waivers"
)

// LoadOptional reads the config file a --config flag names; without one, the config is
// empty.
func LoadOptional(path string) (*Config, error) {
	if path == "" {
		return &Config{}, nil
	}
	return Load(path)
}

// DSN is the database a run uses: the --db flag's dsn, else the config's db:, else
// store.DefaultPath. One resolution for every command, so that none reads a history
// other than the one scan writes. c may be nil.
func (c *Config) DSN(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if c != nil && c.DB != "" {
		return c.DB, nil
	}
	return store.DefaultPath()
}

// LoadWaivers reads the waiver file a --waivers flag names, else the config's waivers:
// file; nil when neither names one.
func (c *Config) LoadWaivers(flag string) (*waivers.Set, error) {
	file := cmp.Or(flag, c.Waivers)
	if file == "" {
		return nil, nil
	}
	return waivers.Load(file)
}

// OpenStore opens the history every command shares: the database a --db flag names,
// else the config's db:, else the default path (DSN), so that no command reads a
// history other than the one scan writes. With create false, a database that does not
// exist is an error (a wrong --db), never an empty one made on the spot.
func (c *Config) OpenStore(ctx context.Context, flag string, create bool) (*store.Store, error) {
	dsn, err := c.DSN(flag)
	if err != nil {
		return nil, err
	}
	if !create {
		return store.OpenExisting(ctx, dsn)
	}
	return store.Open(ctx, dsn)
}

// CheckTarget is the file `warden config check` checks: its argument (args, at most one)
// or its --config flag, as every other command takes a config. Both may be given when
// they name the same file; neither, or two different files, is an error.
func CheckTarget(args []string, flag string) (string, error) {
	arg := ""
	if len(args) > 0 {
		arg = args[0]
	}
	switch {
	case len(args) > 1:
		return "", fmt.Errorf("one config file to check, not %d", len(args))
	case arg == "" && flag == "":
		return "", errors.New("name the config file to check: warden config check FILE (or --config FILE)")
	case arg != "" && flag != "" && filepath.Clean(arg) != filepath.Clean(flag):
		return "", fmt.Errorf("two config files named: %s (argument) and %s (--config): check one at a time", arg, flag)
	}
	return cmp.Or(arg, flag), nil
}
