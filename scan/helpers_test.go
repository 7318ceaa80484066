package scan_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/warden-sec/warden/engine"
	"github.com/warden-sec/warden/policies"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
	"github.com/warden-sec/warden/waivers"
)

// rootPolicy finds a root user without MFA, and fails at run time (two values for the
// complete rule x) when the root user also has active access keys.
const rootPolicy = `# METADATA
# title: Root without MFA
# custom:
#   id: TEST-ROOT-001
#   severity: critical
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package test.root

x := 1 if input.resource.attributes.mfa_active == false
x := 2 if input.resource.attributes.access_keys_active > 0

deny contains "root has no MFA" if {
	input.resource.attributes.mfa_active == false
	x != 3
}
`

// lowPolicy finds something of low severity on every root user with MFA.
const lowPolicy = `# METADATA
# title: Root in use
# custom:
#   id: TEST-LOW-001
#   severity: low
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package test.low

deny contains "root user exists" if input.resource.attributes.mfa_active == true
`

// slowPolicy iterates long enough to be interrupted.
const slowPolicy = `# METADATA
# title: Slow
# custom:
#   id: TEST-SLOW-001
#   severity: low
#   resource_types: [aws.iam.root_user]
#   remediation: {action: notify, risk: none}
package test.slow

deny contains "never" if {
	some i in numbers.range(1, 30000)
	some j in numbers.range(1, 30000)
	i * j == -1
}
`

func newEngine(t testing.TB, files map[string]string) *engine.Engine {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, src := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(src)}
	}
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: fsys, Prefix: "testpolicies"}}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// testEngine has the critical root policy and the low one.
func testEngine(t testing.TB) *engine.Engine {
	return newEngine(t, map[string]string{"root.rego": rootPolicy, "low.rego": lowPolicy})
}

// builtinEngine has warden's own policy pack.
func builtinEngine(t testing.TB) *engine.Engine {
	t.Helper()
	e, err := engine.New(context.Background(), engine.Config{Sources: []engine.Source{{FS: policies.FS, Prefix: "policies"}}})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// root is the root user of an account: without MFA it has a critical finding, with MFA a
// low one; with active keys and no MFA its critical policy fails (an eval error).
type root struct {
	account string
	mfa     bool
	keys    int
}

func (r root) json() string {
	return fmt.Sprintf(`{"uid": "arn:aws:iam::%[1]s:root", "type": "aws.iam.root_user", "account": "%[1]s", "region": "global",
 "attributes": {"mfa_active": %[2]v, "access_keys_active": %[3]d}}`, r.account, r.mfa, r.keys)
}

// snap is a snapshot collected at `at` holding roots. With scopes, each account's IAM
// scope is declared, failed for the accounts in failed (whose roots must then be left
// out, as a collector leaves them out).
func snap(at string, failed []string, roots ...root) string {
	var rs []string
	for _, r := range roots {
		rs = append(rs, r.json())
	}
	scopes := ""
	if failed != nil {
		var ss []string
		seen := map[string]bool{}
		for _, r := range roots {
			if !seen[r.account] {
				seen[r.account] = true
				ss = append(ss, fmt.Sprintf(`{"id": "aws/%[1]s/iam", "provider": "aws", "account": "%[1]s", "service": "iam", "status": "ok"}`, r.account))
			}
		}
		for _, a := range failed {
			ss = append(ss, fmt.Sprintf(`{"id": "aws/%[1]s/iam", "provider": "aws", "account": "%[1]s", "service": "iam", "status": "failed", "error": "AccessDenied"}`, a))
		}
		scopes = `, "scopes": [` + strings.Join(ss, ",\n") + `]`
	}
	return `{"version": 1, "collected_at": "` + at + `", "resources": [` + strings.Join(rs, ",\n") + `]` + scopes + `}`
}

// backends runs f on a fresh history in every database the store supports.
func backends(t *testing.T, f func(t *testing.T, st *store.Store)) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) { f(t, storetest.Open(t, dsn(t))) })
	}
}

func parseWaivers(t testing.TB, yaml string) *waivers.Set {
	t.Helper()
	set, err := waivers.Parse([]byte(yaml), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// openSQLite is a fresh SQLite history, for tests of what the database does not change.
func openSQLite(t *testing.T) *store.Store {
	t.Helper()
	return storetest.Open(t, filepath.Join(t.TempDir(), "h.db"))
}
