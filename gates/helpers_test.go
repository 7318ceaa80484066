package gates_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// clock is a test's settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is one test's gate over a fresh database.
type env struct {
	t     testing.TB
	dsn   string
	st    *store.Store
	log   *audit.Log
	gate  *gates.Gate
	clock *clock
	cfg   gates.Config
}

// testConfig is the rules' tests' config: names nobody checks, as signing is signed_test.go's.
var testConfig = gates.Config{Approvers: []string{"bob", "carol", "dave"}, UncheckedNames: true}

func newEnv(t testing.TB, mkDSN func(testing.TB) string, cfg gates.Config) *env {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	dsn := mkDSN(t)
	e := &env{t: t, dsn: dsn, st: storetest.Open(t, dsn), clock: newClock(), cfg: cfg}
	e.log = audit.New(e.st, audit.Options{Now: e.clock.Now})
	e.gate = gates.New(e.st, e.log, cfg, e.clock.Now)
	return e
}

// second is another gate on the same database through its own *store.Store, as a second
// warden process would have.
func (e *env) second() *gates.Gate {
	st := storetest.Open(e.t, e.dsn)
	return gates.New(st, audit.New(st, audit.Options{Now: e.clock.Now}), e.cfg, e.clock.Now)
}

func action(id string, risk findings.Risk) remediators.Action {
	return remediators.Action{ID: id, Remediator: "aws.ec2.revoke_ingress", Target: "arn:aws:ec2:eu-west-1:111122223333:security-group/sg-1",
		Part: "ingress/tcp/22-22/0.0.0.0/0", Risk: risk, Policy: "WARDEN-AWS-NET-001", Finding: "fp-" + id}
}

// request makes a request for action id at risk, requested by alice.
func (e *env) request(id string, risk findings.Risk, hash string) gates.Request {
	e.t.Helper()
	var r gates.Request
	err := e.st.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		r, err = e.gate.Request(context.Background(), tx, action(id, risk), hash, "alice")
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) get(id string) gates.Request {
	e.t.Helper()
	r, err := e.gate.Get(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// auditEntry is what a test checks of one audit entry.
type auditEntry struct {
	Actor, Kind, Subject string
	Data                 map[string]any
}

// entries returns the audit log's entries, oldest first.
func (e *env) entries() []auditEntry {
	e.t.Helper()
	db, _ := storetest.RawDB(e.t, e.dsn)
	rows, err := db.Query(`SELECT actor, kind, subject, data FROM audit_entries ORDER BY seq`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []auditEntry
	for rows.Next() {
		var a auditEntry
		var data string
		if err := rows.Scan(&a.Actor, &a.Kind, &a.Subject, &data); err != nil {
			e.t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(data), &a.Data); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// kinds counts the audit entries of subject by kind.
func (e *env) kinds(subject string) map[string]int {
	out := map[string]int{}
	for _, a := range e.entries() {
		if a.Subject == subject {
			out[a.Kind]++
		}
	}
	return out
}

// breakAudit makes every later audit append fail, as a full disk or a lost connection
// would, by taking the audit log's table away.
func (e *env) breakAudit() {
	e.t.Helper()
	db, _ := storetest.RawDB(e.t, e.dsn)
	exec(e.t, db, `ALTER TABLE audit_entries RENAME TO audit_entries_gone`)
}

// rows counts the rows a query over the raw database returns.
func rows(t testing.TB, dsn, query string, args ...any) int {
	t.Helper()
	db, name := storetest.RawDB(t, dsn)
	if name == "postgres" {
		query = dollar(query)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM ("+query+") q", args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func dollar(q string) string {
	out, n := []byte{}, 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			out = append(out, "$"+strconv.Itoa(n)...)
			continue
		}
		out = append(out, q[i])
	}
	return string(out)
}

func exec(t testing.TB, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatal(err)
	}
}
