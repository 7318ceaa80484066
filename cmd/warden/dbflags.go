package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/store"
)

// dbHelp is --db's help where the database's forms are spelled out.
const dbHelp = "warden's database: a SQLite file, a postgres:// URL or a PostgreSQL key=value DSN (default the config's db:, else $XDG_STATE_HOME/warden/warden.db)"

// dbConfigHelp is --config's help where only its db: is read.
const dbConfigHelp = "YAML config whose db: names warden's database"

// dbFlags are the flags of the commands over warden's database alone (audit, approvals,
// tokens, actions): --db, else the db: of --config, whose other sections (gates:) they
// may read too.
type dbFlags struct {
	dbPath, configFile string
}

func (f *dbFlags) register(cmd *cobra.Command, dbUsage, configUsage string) {
	cmd.Flags().StringVar(&f.dbPath, "db", "", dbUsage)
	cmd.Flags().StringVar(&f.configFile, "config", "", configUsage)
}

// config is --config loaded, or the empty config without one.
func (f *dbFlags) config() (*config.Config, error) { return config.LoadOptional(f.configFile) }

// open loads the config and opens the database (openHistory: with create false, a
// missing database is a wrong --db, not an empty one).
func (f *dbFlags) open(ctx context.Context, create bool) (*config.Config, *store.Store, error) {
	cfg, err := f.config()
	if err != nil {
		return nil, nil, err
	}
	st, err := cfg.OpenStore(ctx, f.dbPath, create)
	if err != nil {
		return nil, nil, err
	}
	return cfg, st, nil
}
