package audit_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store/storetest"
)

// AppendChanged finds the latest version entry through the index of kinds, not by
// walking the log back, even in the generic plan PostgreSQL gives a prepared statement
// after a few runs: it runs under the audit lock, once per fix job's plan.
func TestAppendChanged_findsTheLatestOfAKindByItsIndex(t *testing.T) {
	base := os.Getenv("WARDEN_TEST_POSTGRES")
	if base == "" {
		t.Skip("PostgreSQL not tested: set WARDEN_TEST_POSTGRES")
	}
	dsn := storetest.FreshSchema(t, base)
	storetest.Open(t, dsn) // migrated
	db, _ := storetest.RawDB(t, dsn)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A log as a first sweep leaves it: two version entries, then thousands of others.
	for _, q := range []string{
		`INSERT INTO audit_entries (seq, at, actor, kind, subject, data) VALUES (0, '', 'w', 'policy.pack', 'v1', '{}'), (1, '', 'w', 'config', 'c1', '{}')`,
		`INSERT INTO audit_entries (seq, at, actor, kind, subject, data)
			SELECT g, '', 'w', CASE WHEN g % 10 = 0 THEN 'plan.created' ELSE 'finding.opened' END, 'fp' || g, '{}' FROM generate_series(2, 50000) g`,
		`ANALYZE audit_entries`,
		`SET plan_cache_mode = force_generic_plan`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	query := audit.LastOfKind
	for i := 1; strings.Contains(query, "?"); i++ {
		query = strings.Replace(query, "?", "$"+string(rune('0'+i)), 1)
	}
	if _, err := conn.ExecContext(ctx, `PREPARE last_of_kind(text, text) AS `+query); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `EXPLAIN EXECUTE last_of_kind('policy.pack', 'policy.pack')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan.String(), "audit_entries_kind") || strings.Contains(plan.String(), "audit_entries_pkey") {
		t.Errorf("the generic plan of the latest entry of a kind does not go by the index of kinds:\n%s", plan.String())
	}
	var subject string
	if err := conn.QueryRowContext(ctx, `EXECUTE last_of_kind('policy.pack', 'policy.pack')`).Scan(&subject); err != nil || subject != "v1" {
		t.Errorf("latest policy.pack entry: %q, %v; want v1", subject, err)
	}
}
