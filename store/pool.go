package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Dialect names the store's database: "sqlite" or "postgres".
func (s *Store) Dialect() string { return s.d.name }

// OpenSQLitePool opens a second pool on the store's SQLite file, with the same settings
// and one connection: for the job queue, which must not wait behind the store's own
// connections nor hold one the store needs. Its connection keeps the statements it runs
// again prepared (openCachedSQLite). The caller closes it.
func (s *Store) OpenSQLitePool() (*sql.DB, error) {
	if s.d.name != "sqlite" || s.uri == "" {
		return nil, errors.New("open a second SQLite pool: the store is not a SQLite file")
	}
	db, err := openCachedSQLite(s.uri)
	if err != nil {
		return nil, fmt.Errorf("open a second SQLite pool: %w", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// PostgresPoolConfig is the configuration of a pgx pool on the store's PostgreSQL
// database, for the job queue's driver (which speaks pgx, not database/sql). Errors
// never show the DSN's credentials.
func (s *Store) PostgresPoolConfig() (*pgxpool.Config, error) {
	if s.d.name != "postgres" || s.dsn == "" {
		return nil, errors.New("pgx pool: the store is not a PostgreSQL database")
	}
	cfg, err := pgxpool.ParseConfig(s.dsn)
	if err != nil {
		return nil, fmt.Errorf("pgx pool on %s: %w", RedactDSN(s.dsn), scrub(err, dsnSecrets(s.dsn)))
	}
	return cfg, nil
}
