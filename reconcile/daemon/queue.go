package daemon

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/warden-sec/warden/store"
)

// migrateLock is the session advisory lock PostgreSQL replicas take around River's
// migrations, which are not safe to run twice at once ("wardenrv").
const migrateLock = 0x77617264656e7276

// queue is River on one of warden's databases: the client's methods that do not depend
// on the driver's transaction type, and a way to close what it opened.
type queue interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
	Stopped() <-chan struct{}
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertMany(ctx context.Context, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobRetry(ctx context.Context, id int64) (*rivertype.JobRow, error)
	JobCancel(ctx context.Context, id int64) (*rivertype.JobRow, error)
	Subscribe(kinds ...river.EventKind) (<-chan *river.Event, func())
	ID() string
}

// openQueue opens River on the store's database: on SQLite a second pool of one
// connection on the same file (River waits behind no store connection, and holds none
// the store needs), on PostgreSQL a pgx pool and River's own schema. River's migrations
// run first, serialized across processes. close releases the pool.
func openQueue(ctx context.Context, st *store.Store, cfg *river.Config) (q queue, close func(), err error) {
	switch st.Dialect() {
	case "sqlite":
		db, err := st.OpenSQLitePool()
		if err != nil {
			return nil, nil, err
		}
		drv := riversqlite.New(db)
		if err := migrateSQLite(ctx, db, drv); err != nil {
			db.Close()
			return nil, nil, err
		}
		c, err := river.NewClient(drv, cfg)
		if err != nil {
			db.Close()
			return nil, nil, fmt.Errorf("start the job queue: %w", err)
		}
		return c, func() { db.Close() }, nil
	case "postgres":
		pc, err := st.PostgresPoolConfig()
		if err != nil {
			return nil, nil, err
		}
		pool, err := pgxpool.NewWithConfig(ctx, pc)
		if err != nil {
			return nil, nil, fmt.Errorf("open the job queue's pool: %w", err)
		}
		// River's tables (river_job, river_leader, …) sit beside warden's, in the schema
		// the store uses (the DSN's search_path, else public): a deployment is one schema.
		var schema string
		if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			pool.Close()
			return nil, nil, fmt.Errorf("start the job queue: find the schema: %w", err)
		}
		drv := riverpgxv5.New(pool)
		if err := migratePostgres(ctx, pool, drv, schema); err != nil {
			pool.Close()
			return nil, nil, err
		}
		cfg.Schema = schema
		c, err := river.NewClient(drv, cfg)
		if err != nil {
			pool.Close()
			return nil, nil, fmt.Errorf("start the job queue: %w", err)
		}
		return c, pool.Close, nil
	}
	return nil, nil, fmt.Errorf("start the job queue: unknown database %q", st.Dialect())
}

// migrateSQLite runs River's migrations in one immediate transaction: the read of what
// is applied and the changes happen under the write lock, so two processes starting at
// once do not both migrate (River's Migrate takes no lock).
func migrateSQLite(ctx context.Context, db *sql.DB, drv *riversqlite.Driver) error {
	m, err := rivermigrate.New(drv, nil)
	if err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	defer tx.Rollback()
	//lint:ignore SA1019 MigrateTx is what serializes SQLite migrations; see above.
	if _, err := m.MigrateTx(ctx, tx, rivermigrate.DirectionUp, nil); err != nil { //nolint:staticcheck
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	return nil
}

// migratePostgres runs River's migrations in schema under a session advisory lock, so
// that replicas starting together migrate once.
func migratePostgres(ctx context.Context, pool *pgxpool.Pool, drv *riverpgxv5.Driver, schema string) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("migrate the job queue: take the lock: %w", err)
	}
	defer func() {
		unlock, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = conn.Exec(unlock, "SELECT pg_advisory_unlock($1)", int64(migrateLock))
	}()
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Schema: schema})
	if err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate the job queue: %w", err)
	}
	return nil
}
