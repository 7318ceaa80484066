package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// migrations are the schema's versions, one file each, named NNNN_what.sql and applied
// in order. They are written once for both databases: {{serial}} is an auto-increment
// primary key, {{bigint}} a 64-bit integer (a reference to one), {{blob}} bytes. A file,
// once released, is never edited: a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one version of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads the embedded migrations in version order.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration %s: name is not NNNN_what.sql", name)
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", name))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: strings.TrimSuffix(name, ".sql"), sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i := 1; i < len(out); i++ {
		if out[i].version == out[i-1].version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].name, out[i].name, out[i].version)
		}
	}
	return out, nil
}

// render turns a migration's portable SQL into the dialect's statements.
func (d dialect) render(sql string) []string {
	r := strings.NewReplacer("{{serial}}", d.serial, "{{bigint}}", d.ref, "{{blob}}", d.blob)
	var out []string
	var cur strings.Builder
	for line := range strings.SplitSeq(r.Replace(sql), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(trimmed, ";") {
			if s := strings.TrimSpace(cur.String()); s != ";" {
				out = append(out, strings.TrimSuffix(s, ";"))
			}
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// SchemaVersion is the newest schema version this build of warden knows.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return ms[len(ms)-1].version
}

// migrate brings the schema to the newest version in one transaction, so that the
// pending versions apply all or none, under the writers' lock so that two processes
// starting at once apply each version once. A database whose recorded versions have a
// gap (a hand-edited schema_migrations) is refused rather than half-migrated. A
// database already at a newer version than this binary knows is refused: an older warden
// must not write into a schema it does not understand.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version INTEGER PRIMARY KEY,
			name TEXT NOT NULL,
			applied_at TEXT NOT NULL
		)`); err != nil {
			return fmt.Errorf("migrate: create schema_migrations: %w", err)
		}
		recorded := map[int]bool{}
		current := 0
		rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("migrate: read schema version: %w", err)
		}
		for rows.Next() {
			var v int
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return fmt.Errorf("migrate: read schema version: %w", err)
			}
			recorded[v] = true
			current = max(current, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("migrate: read schema version: %w", err)
		}
		if latest := ms[len(ms)-1].version; current > latest {
			return fmt.Errorf("migrate: the database is at schema version %d, newer than this warden knows (%d): upgrade warden", current, latest)
		}
		for _, m := range ms {
			if m.version < current && !recorded[m.version] {
				return fmt.Errorf("migrate: schema_migrations records version %d but not %s: versions are missing, so the schema is not one warden made; restore the database from a backup", current, m.name)
			}
		}
		for _, m := range ms {
			if m.version <= current {
				continue
			}
			for _, q := range s.d.render(m.sql) {
				if _, err := tx.ExecContext(ctx, q); err != nil {
					return fmt.Errorf("migrate: %s: %w", m.name, err)
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, time.Now().UTC().Format(time.RFC3339Nano)); err != nil {
				return fmt.Errorf("migrate: record %s: %w", m.name, err)
			}
		}
		return nil
	})
}
