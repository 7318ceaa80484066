package config

import (
	"cmp"
	"context"

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
