package store_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners names, for every table, the one package (its directory, from the module root)
// that writes it and reads it: everyone else calls that package's functions, never its
// SQL (DESIGN.md, "A table has one owner"). The migrations that create the tables stay
// together in store/migrations, so the schema has one history; a table a migration adds
// must be given an owner here.
var owners = map[string]string{
	// The schema's own versions (store/migrate.go).
	"schema_migrations": "store",
	// The scan history.
	"scans":    "store",
	"findings": "store",
	// The Merkle audit log and its checkpoints.
	"audit_entries":     "audit",
	"audit_hashes":      "audit",
	"audit_meta":        "audit",
	"audit_checkpoints": "audit",
	// Approval requests and their decisions.
	"approval_requests":  "gates",
	"approval_decisions": "gates",
	// The fix machine: plans, actions and their events, the safety controls.
	"plans":         "remediate",
	"actions":       "remediate",
	"action_events": "remediate",
	"controls":      "remediate",
	// The renewed certificates' encrypted archive.
	"cert_archive": "remediators/certs",
	// The dashboard's logins and API tokens.
	"dashboard_sessions": "dashboard",
	"dashboard_tokens":   "dashboard",
	// The Slack messages that follow each approval request.
	"slack_messages": "slackgate",
	// The daemon's view of each scope, resource and finding between its jobs.
	"scope_state":    "reconcile/state",
	"resource_state": "reconcile/state",
	"finding_state":  "reconcile/state",
	"account_lists":  "reconcile/state",
	"listed_scopes":  "reconcile/state",
	"scope_listings": "reconcile/state",
	// What was last sent of each finding to Security Hub and Security Command Center.
	"published_findings": "publish",
	// River's job queue, which River migrates itself; the daemon reads it.
	"river_job":    "reconcile/daemon",
	"river_leader": "reconcile/daemon",
}

// migratedElsewhere are the owned tables no file of store/migrations creates.
var migratedElsewhere = []string{"schema_migrations", "river_job", "river_leader"}

// Every table the migrations leave has an owner, and every owner listed is a package
// that exists and a table that does.
func TestOwners_everyTableHasOne(t *testing.T) {
	tables, err := migratedTables("migrations")
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) == 0 {
		t.Fatal("no CREATE TABLE found in store/migrations")
	}
	for _, tb := range tables {
		if _, ok := owners[tb]; !ok {
			t.Errorf("table %s (store/migrations) has no owner: add it to owners in store/owners_test.go with the one package that reads and writes it", tb)
		}
	}
	root := moduleRoot(t)
	for tb, dir := range owners {
		if !slices.Contains(tables, tb) && !slices.Contains(migratedElsewhere, tb) {
			t.Errorf("owners lists %s, which no migration leaves: remove it", tb)
		}
		if st, err := os.Stat(filepath.Join(root, dir)); err != nil || !st.IsDir() {
			t.Errorf("the owner of %s, %s, is not a package directory of the module", tb, dir)
		}
	}
}

// testsReadingForeignTables are the test files that name in SQL a table their package
// does not own, each with why: a test that checks what the owner wrote by reading or
// forging its rows directly (an audit log tampered with, a fault injected into a table,
// a decision inserted by hand) is the point of the test, and going through the owner
// would hide what it checks. Any other test file is held to the rule as code is.
var testsReadingForeignTables = map[string]string{
	"cmd/warden/audit_test.go":             "tampers with audit rows to check that audit verify names the first bad entry",
	"cmd/warden/faults_pg_test.go":         "injects faults into tables from outside the process under test",
	"cmd/warden/replicas_test.go":          "reads what several replicas wrote to prove each action ran once",
	"cmd/warden/sweep_bench_test.go":       "counts jobs and rows a sweep left, as an operator would",
	"compliance/evidence/evidence_test.go": "forges the daemon's and the history's rows a report must stand on",
	"gates/helpers_test.go":                "reads the audit entries a decision must have appended in its transaction",
	"remediate/applydue_test.go":           "inserts an approval decision by hand to prove warden serve's pass still finds it",
	"remediate/signed_e2e_test.go":         "inserts approval decisions by hand to prove a forged decision changes nothing in the cloud",
	"reconcile/daemon/decisions_test.go":   "writes a decision stamped by a clock far behind, as another machine's could be",
	"reconcile/daemon/twice_test.go":       "reads the actions table to prove a killed replica's work finished once",
	"scan/scan_test.go":                    "reads the audit entries a recorded scan must have appended",
	"store/migrate_test.go":                "checks the schema every migration leaves, table by table",
	"store/owners_test.go":                 "its matcher's own examples of SQL naming every kind of table",
}

// No Go string outside a table's owner names the table in SQL; a test file only when
// testsReadingForeignTables says why.
func TestOwners_noForeignSQL(t *testing.T) {
	root := moduleRoot(t)
	var found []string
	allowedSeen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		vs, err := foreignSQL(path, filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		file := filepath.ToSlash(filepath.Join(rel, name))
		if _, ok := testsReadingForeignTables[file]; ok && strings.HasSuffix(name, "_test.go") {
			allowedSeen[file] = len(vs) > 0
			return nil
		}
		found = append(found, vs...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range found {
		t.Error(v)
	}
	for file := range testsReadingForeignTables {
		if !allowedSeen[file] {
			t.Errorf("testsReadingForeignTables lists %s, which names no foreign table (or is gone): remove it", file)
		}
	}
}

// foreignSQL returns, for the Go file at path in package directory dir, each string
// literal that names in SQL a table dir does not own, as "file:line: …".
func foreignSQL(path, dir string) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		for _, tb := range tablesIn(s) {
			if owner := owners[tb]; owner != dir {
				pos := fset.Position(lit.Pos())
				out = append(out, fmt.Sprintf("%s:%d: names table %s in SQL, which package %s owns: call a function of %s instead",
					pos.Filename, pos.Line, tb, owner, owner))
			}
		}
		return true
	})
	return out, nil
}

// sqlName matches a name where SQL takes a table: after FROM (DELETE FROM), JOIN, INTO,
// UPDATE, TABLE (CREATE, ALTER, DROP, LOCK, TRUNCATE TABLE; IF [NOT] EXISTS) or
// TRUNCATE, in any case, across lines.
var sqlName = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|INTO|UPDATE|TABLE|TRUNCATE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?:ONLY\s+)?"?([a-z_][a-z0-9_]*)\b`)

// tablesIn returns the owned tables s names in SQL position, in order.
func tablesIn(s string) []string {
	var out []string
	for _, m := range sqlName.FindAllStringSubmatch(s, -1) {
		if _, ok := owners[strings.ToLower(m[1])]; ok {
			out = append(out, strings.ToLower(m[1]))
		}
	}
	return out
}

// The matcher finds a table in SQL position however the query is laid out, and only
// there, and only the whole name.
func TestOwners_tablesIn(t *testing.T) {
	for _, c := range []struct {
		s    string
		want []string
	}{
		{"SELECT size FROM audit_checkpoints ORDER BY id DESC", []string{"audit_checkpoints"}},
		{"select count(*)\n\t\tfrom\n  finding_state where status = 'open'", []string{"finding_state"}},
		{"INSERT INTO scope_state (scope) VALUES (?)", []string{"scope_state"}},
		{"UPDATE actions SET state = ?", []string{"actions"}},
		{"DELETE FROM resource_state WHERE scope = ?", []string{"resource_state"}},
		{"CREATE TABLE IF NOT EXISTS scans (id INTEGER)", []string{"scans"}},
		{"SELECT a.id FROM actions a JOIN action_events e ON e.action = a.id", []string{"actions", "action_events"}},
		{"ALTER TABLE audit_entries RENAME TO audit_entries_gone", []string{"audit_entries"}},
		{"SELECT * FROM audit_entries_gone", nil},
		{"read the scope_state of a scope", nil},
		{"plan the fixes of the scope's open findings", nil},
		{"SELECT kind FROM river_job", []string{"river_job"}},
	} {
		if got := tablesIn(c.s); !slices.Equal(got, c.want) {
			t.Errorf("tablesIn(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// createOrRename reads the statements of a migration that make, rename and drop tables.
var createOrRename = regexp.MustCompile(`(?is)\b(?:CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)|DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?([a-z_][a-z0-9_]*)|ALTER\s+TABLE\s+([a-z_][a-z0-9_]*)\s+RENAME\s+TO\s+([a-z_][a-z0-9_]*))`)

// migratedTables returns the tables that exist after every migration in dir, sorted.
func migratedTables(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files) // NNNN_what.sql: in version order
	exist := map[string]bool{}
	comment := regexp.MustCompile(`--[^\n]*`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range createOrRename.FindAllStringSubmatch(comment.ReplaceAllString(string(b), ""), -1) {
			switch {
			case m[1] != "":
				exist[strings.ToLower(m[1])] = true
			case m[2] != "":
				delete(exist, strings.ToLower(m[2]))
			default:
				delete(exist, strings.ToLower(m[3]))
				exist[strings.ToLower(m[4])] = true
			}
		}
	}
	out := make([]string, 0, len(exist))
	for tb := range exist {
		out = append(out, tb)
	}
	slices.Sort(out)
	return out, nil
}

// moduleRoot is the directory of the module's go.mod, above this package's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the store package")
		}
		dir = parent
	}
}
