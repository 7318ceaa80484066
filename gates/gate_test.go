package gates_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

var ctx = context.Background()

func TestRequest_idempotentForSameContent(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			first := e.request("act-1", findings.RiskMedium, "h1")
			if first.State != gates.StatePending || first.Quorum != 1 || first.Requester != "alice" || first.ID != gates.RequestID("act-1", "h1") {
				t.Fatalf("request = %+v", first)
			}
			if want := e.clock.Now().Add(gates.DefaultExpiry); !first.ExpiresAt.Equal(want) {
				t.Errorf("expires at %v, want %v", first.ExpiresAt, want)
			}
			e.clock.Advance(time.Minute)
			again := e.request("act-1", findings.RiskMedium, "h1")
			if again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) {
				t.Errorf("second request = %+v, want the first %+v", again, first)
			}
			if n := rows(t, e.dsn, `SELECT id FROM approval_requests`); n != 1 {
				t.Errorf("%d requests stored, want 1", n)
			}
			if k := e.kinds(first.ID); k[audit.KindApprovalRequested] != 1 || len(k) != 1 {
				t.Errorf("audit entries = %v, want one %s", k, audit.KindApprovalRequested)
			}
		})
	}
}

func TestRequest_newContentHashVoidsOlder(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			old := e.request("act-1", findings.RiskMedium, "h1")
			if _, err := e.gate.Decide(ctx, old.ID, "bob", "cli", true, ""); err != nil {
				t.Fatal(err)
			}
			if ok, err := approved(e, "act-1", "h1"); err != nil || !ok {
				t.Fatalf("approved before the change = %v, %v; want true", ok, err)
			}
			// The target changed: the plan's action has a new content hash.
			cur := e.request("act-1", findings.RiskMedium, "h2")
			if cur.ID == old.ID || cur.State != gates.StatePending || len(cur.Decisions) != 0 {
				t.Fatalf("new request = %+v", cur)
			}
			was := e.get(old.ID)
			if was.State != gates.StateVoided || !strings.Contains(was.Reason, cur.ID) {
				t.Errorf("old request = %s (%q), want voided naming %s", was.State, was.Reason, cur.ID)
			}
			for hash, want := range map[string]bool{"h1": false, "h2": false} {
				if ok, err := approved(e, "act-1", hash); err != nil || ok != want {
					t.Errorf("approved(%s) = %v, %v; want %v", hash, ok, err, want)
				}
			}
			if k := e.kinds(old.ID); k[audit.KindApprovalVoided] != 1 {
				t.Errorf("audit entries of the old request = %v, want one %s", k, audit.KindApprovalVoided)
			}
			_, err := e.gate.Decide(ctx, old.ID, "carol", "cli", true, "")
			if !errors.Is(err, gates.ErrVoided) {
				t.Errorf("deciding the voided request: %v, want ErrVoided", err)
			}
		})
	}
}

func approved(e *env, actionID, hash string) (bool, error) {
	var ok bool
	err := e.st.Read(ctx, func(r *store.Reader) error {
		var err error
		ok, err = e.gate.Approved(ctx, r, actionID, hash)
		return err
	})
	return ok, err
}

func TestRequest_refusesRisksThatNeedNoApproval(t *testing.T) {
	e := newEnv(t, storetest.Backends(t)["sqlite"], gates.Config{Approvers: []string{"bob", "carol"}, Refuse: []findings.Risk{findings.RiskHigh}, UncheckedNames: true})
	for risk, want := range map[findings.Risk]error{findings.RiskLow: gates.ErrNotRequired, findings.RiskNone: gates.ErrNotRequired, findings.RiskHigh: gates.ErrRefused} {
		err := e.st.InTx(ctx, func(tx *store.Tx) error {
			_, err := e.gate.Request(ctx, tx, action("act-"+risk.String(), risk), "h", "alice")
			return err
		})
		if !errors.Is(err, want) {
			t.Errorf("request at %s risk: %v, want %v", risk, err, want)
		}
	}
	if n := rows(t, e.dsn, `SELECT id FROM approval_requests`); n != 0 {
		t.Errorf("%d requests stored, want none", n)
	}
}

func TestDecide_refusals(t *testing.T) {
	tests := []struct {
		name    string
		cfg     gates.Config
		prepare func(e *env, id string)
		actor   string
		channel string
		approve bool
		reason  string
		want    error
		inMsg   string
	}{
		{name: "requester", actor: "alice", approve: true, want: gates.ErrSelfApproval, inMsg: "alice requested it"},
		{name: "requester who is also an approver", cfg: gates.Config{Approvers: []string{"alice", "bob"}, UncheckedNames: true}, actor: "alice", approve: true, want: gates.ErrSelfApproval},
		{name: "requester denying", actor: "alice", reason: "no", want: gates.ErrSelfApproval},
		{name: "not an approver", actor: "mallory", approve: true, want: gates.ErrNotApprover, inMsg: "bob, carol, dave"},
		{name: "no approvers configured", cfg: gates.Config{}, actor: "bob", approve: true, want: gates.ErrNotApprover, inMsg: "no approvers are configured"},
		{name: "deny without a reason", actor: "bob", reason: "  ", want: gates.ErrDenyNeedsReason},
		{name: "unknown request", actor: "bob", approve: true, want: gates.ErrNotFound, prepare: func(e *env, id string) {}},
		{name: "twice by the same approver", actor: "bob", approve: true, want: gates.ErrAlreadyDecided, inMsg: "bob approved it",
			cfg:     gates.Config{Approvers: []string{"bob", "carol"}, Quorum: map[findings.Risk]int{findings.RiskMedium: 2}, UncheckedNames: true},
			prepare: func(e *env, id string) { decide(e, id, "bob", true, "") }},
		{name: "deny after approving", actor: "bob", reason: "changed my mind", want: gates.ErrAlreadyDecided,
			cfg:     gates.Config{Approvers: []string{"bob", "carol"}, Quorum: map[findings.Risk]int{findings.RiskMedium: 2}, UncheckedNames: true},
			prepare: func(e *env, id string) { decide(e, id, "bob", true, "") }},
		{name: "already approved by another", actor: "carol", approve: true, want: gates.ErrAlreadyDecided, inMsg: "was approved",
			prepare: func(e *env, id string) { decide(e, id, "bob", true, "") }},
		{name: "already denied", actor: "carol", approve: true, want: gates.ErrAlreadyDecided, inMsg: "was denied",
			prepare: func(e *env, id string) { decide(e, id, "bob", false, "too broad") }},
		{name: "voided", actor: "bob", approve: true, want: gates.ErrVoided, inMsg: "the plan was withdrawn",
			prepare: func(e *env, id string) {
				if err := e.st.InTx(ctx, func(tx *store.Tx) error { return e.gate.Void(ctx, tx, "act-1", "the plan was withdrawn") }); err != nil {
					e.t.Fatal(err)
				}
			}},
		{name: "risk refused since the request", actor: "bob", approve: true, want: gates.ErrRefused,
			prepare: func(e *env, id string) {
				// The same database, under rules that now refuse medium risk.
				cfg := testConfig
				cfg.Refuse = []findings.Risk{findings.RiskMedium}
				e.gate = gates.New(e.st, e.log, cfg, e.clock.Now)
			}},
		{name: "unknown channel", actor: "bob", channel: "email", approve: true, inMsg: `unknown channel "email"`},
		{name: "no actor", actor: "", approve: true, inMsg: "no actor"},
	}
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					cfg := tt.cfg
					if cfg.Approvers == nil && tt.name != "no approvers configured" {
						cfg = testConfig
					}
					e := newEnv(t, mk, cfg)
					r := e.request("act-1", findings.RiskMedium, "h1")
					id := r.ID
					if tt.prepare != nil {
						tt.prepare(e, id)
						if tt.want == gates.ErrNotFound {
							id = "apr-000000000000"
						}
					}
					before := e.entries()
					beforeDecisions := rows(t, e.dsn, `SELECT actor FROM approval_decisions`)
					channel := tt.channel
					if channel == "" {
						channel = "cli"
					}
					_, err := e.gate.Decide(ctx, id, tt.actor, channel, tt.approve, tt.reason)
					if err == nil {
						t.Fatal("decision accepted, want a refusal")
					}
					if tt.want != nil && !errors.Is(err, tt.want) {
						t.Errorf("error = %v, want %v", err, tt.want)
					}
					if !strings.Contains(err.Error(), tt.inMsg) || !strings.Contains(err.Error(), "request "+id) {
						t.Errorf("error %q does not name the request and %q", err, tt.inMsg)
					}
					if n := rows(t, e.dsn, `SELECT actor FROM approval_decisions`); n != beforeDecisions {
						t.Errorf("a refused decision changed the decisions: %d → %d", beforeDecisions, n)
					}
					if after := e.entries(); len(after) != len(before) {
						t.Errorf("a refused decision was audited: %d → %d entries", len(before), len(after))
					}
				})
			}
		})
	}
}

func decide(e *env, id, actor string, approve bool, reason string) gates.Request {
	e.t.Helper()
	r, err := e.gate.Decide(ctx, id, actor, "cli", approve, reason)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func TestDecide_quorumTwoForCritical(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskCritical, "h1")
			if r.Quorum != 2 {
				t.Fatalf("quorum %d, want 2 for critical", r.Quorum)
			}
			r = decide(e, r.ID, "bob", true, "ok")
			if r.State != gates.StatePending || len(r.Approvals()) != 1 || !r.DecidedAt.IsZero() {
				t.Fatalf("after one approval: %+v", r)
			}
			if ok, _ := approved(e, "act-1", "h1"); ok {
				t.Error("approved after one of two approvals")
			}
			e.clock.Advance(time.Hour)
			r = decide(e, r.ID, "carol", true, "agreed")
			if r.State != gates.StateApproved || len(r.Approvals()) != 2 || !r.DecidedAt.Equal(e.clock.Now()) || r.Reason != "agreed" {
				t.Fatalf("after two approvals: %+v", r)
			}
			if d, ok := r.DecisionBy("bob"); !ok || d.Channel != gates.ChannelCLI || d.Vote != gates.VoteApprove || d.Reason != "ok" {
				t.Errorf("bob's decision = %+v, %v", d, ok)
			}
			if ok, err := approved(e, "act-1", "h1"); err != nil || !ok {
				t.Errorf("approved = %v, %v; want true", ok, err)
			}
			var states []any
			for _, a := range e.entries() {
				if a.Kind == audit.KindApprovalApproved {
					states = append(states, a.Actor, a.Data["state"], a.Data["approvals"])
				}
			}
			if want := []any{"bob", "pending", 1.0, "carol", "approved", 2.0}; !equal(states, want) {
				t.Errorf("approval entries (actor, state, approvals) = %v, want %v", states, want)
			}
		})
	}
}

func equal(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestDecide_denyEndsIt(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskCritical, "h1")
			decide(e, r.ID, "bob", true, "")
			r = decide(e, r.ID, "carol", false, "drops the partner VPN")
			if r.State != gates.StateDenied || r.Reason != "drops the partner VPN" {
				t.Fatalf("after a deny: %+v", r)
			}
			if _, err := e.gate.Decide(ctx, r.ID, "dave", "cli", true, ""); !errors.Is(err, gates.ErrAlreadyDecided) {
				t.Errorf("approving a denied request: %v, want ErrAlreadyDecided", err)
			}
			if again := e.request("act-1", findings.RiskCritical, "h1"); again.State != gates.StateDenied {
				t.Errorf("asking again for the same content = %s, want the denied request", again.State)
			}
			if ok, _ := approved(e, "act-1", "h1"); ok {
				t.Error("a denied request reads as approved")
			}
			if k := e.kinds(r.ID); k[audit.KindApprovalDenied] != 1 {
				t.Errorf("audit entries = %v, want one %s", k, audit.KindApprovalDenied)
			}
		})
	}
}

func TestDecide_expiredRefusedAndMarked(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			r := e.request("act-1", findings.RiskCritical, "h1")
			decide(e, r.ID, "bob", true, "")
			e.clock.Advance(time.Hour)
			got, err := e.gate.Decide(ctx, r.ID, "carol", "cli", true, "")
			if !errors.Is(err, gates.ErrExpired) || !strings.Contains(err.Error(), "1 of 2 approvals") {
				t.Fatalf("deciding after the expiry: %v, want ErrExpired saying 1 of 2 approvals", err)
			}
			if got.State != gates.StateExpired {
				t.Errorf("returned request is %s, want expired", got.State)
			}
			stored := e.get(r.ID)
			if stored.State != gates.StateExpired || len(stored.Decisions) != 1 || !stored.DecidedAt.Equal(e.clock.Now()) {
				t.Errorf("stored request = %+v, want expired with bob's decision only", stored)
			}
			k := e.kinds(r.ID)
			if k[audit.KindApprovalExpired] != 1 || k[audit.KindApprovalApproved] != 1 {
				t.Errorf("audit entries = %v, want one expiry and bob's approval", k)
			}
			for _, a := range e.entries() {
				if a.Kind == audit.KindApprovalExpired && a.Actor != gates.SystemActor {
					t.Errorf("expiry recorded by %q, want %q", a.Actor, gates.SystemActor)
				}
			}
			if _, err := e.gate.Decide(ctx, r.ID, "dave", "cli", true, ""); !errors.Is(err, gates.ErrExpired) {
				t.Errorf("deciding an expired request: %v, want ErrExpired", err)
			}
			if k := e.kinds(r.ID); k[audit.KindApprovalExpired] != 1 {
				t.Errorf("expired twice in the audit log: %v", k)
			}
		})
	}
}

func TestExpireDue(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			early := e.request("act-1", findings.RiskMedium, "h1")
			e.clock.Advance(30 * time.Minute)
			late := e.request("act-2", findings.RiskMedium, "h1")
			decided := e.request("act-3", findings.RiskMedium, "h1")
			decide(e, decided.ID, "bob", true, "")
			// AnyDue says whether ExpireDue has anything to do: a fix job takes the whole
			// store's lock for it only then.
			anyDue := func(want bool, when string) {
				t.Helper()
				if got, err := e.gate.AnyDue(ctx); err != nil || got != want {
					t.Errorf("AnyDue %s = %v, %v; want %v", when, got, err, want)
				}
			}
			anyDue(false, "before the first expiry")
			e.clock.Advance(30 * time.Minute)
			anyDue(true, "at the first expiry")
			var n int
			if err := e.st.InTx(ctx, func(tx *store.Tx) error {
				var err error
				n, err = e.gate.ExpireDue(ctx, tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("expired %d, want 1", n)
			}
			anyDue(false, "once expired")
			for id, want := range map[string]gates.State{early.ID: gates.StateExpired, late.ID: gates.StatePending, decided.ID: gates.StateApproved} {
				if got := e.get(id).State; got != want {
					t.Errorf("request %s is %s, want %s", id, got, want)
				}
			}
			if k := e.kinds(early.ID); k[audit.KindApprovalExpired] != 1 {
				t.Errorf("audit entries of the expired request = %v", k)
			}
		})
	}
}

func TestDecide_auditFailureRollsBack(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskMedium, "h1")
			e.breakAudit()
			if _, err := e.gate.Decide(ctx, r.ID, "bob", "cli", true, ""); err == nil {
				t.Fatal("decision accepted with the audit log failing")
			}
			got := e.get(r.ID)
			if got.State != gates.StatePending || len(got.Decisions) != 0 {
				t.Errorf("after a failed audit append the request is %s with %d decisions, want pending with none", got.State, len(got.Decisions))
			}
			if err := e.st.InTx(ctx, func(tx *store.Tx) error { return e.gate.Void(ctx, tx, "act-1", "withdrawn") }); err == nil {
				t.Error("void accepted with the audit log failing")
			}
			if got := e.get(r.ID); got.State != gates.StatePending {
				t.Errorf("after a failed void the request is %s, want pending", got.State)
			}
			err := e.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := e.gate.Request(ctx, tx, action("act-2", findings.RiskHigh), "h1", "alice")
				return err
			})
			if err == nil {
				t.Error("request accepted with the audit log failing")
			}
			if n := rows(t, e.dsn, `SELECT id FROM approval_requests WHERE action_id = ?`, "act-2"); n != 0 {
				t.Errorf("%d requests stored by a failed request, want none", n)
			}
		})
	}
}

func TestAudit_oneEntryPerChange(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			a := e.request("act-1", findings.RiskCritical, "h1")
			decide(e, a.ID, "bob", true, "")
			decide(e, a.ID, "carol", true, "")
			b := e.request("act-2", findings.RiskMedium, "h1")
			decide(e, b.ID, "dave", false, "not now")
			c := e.request("act-3", findings.RiskMedium, "h1")
			c2 := e.request("act-3", findings.RiskMedium, "h2")
			var got []string
			for _, en := range e.entries() {
				got = append(got, en.Kind+" "+en.Subject+" "+en.Actor)
			}
			want := []string{
				audit.KindApprovalRequested + " " + a.ID + " alice",
				audit.KindApprovalApproved + " " + a.ID + " bob",
				audit.KindApprovalApproved + " " + a.ID + " carol",
				audit.KindApprovalRequested + " " + b.ID + " alice",
				audit.KindApprovalDenied + " " + b.ID + " dave",
				audit.KindApprovalRequested + " " + c.ID + " alice",
				audit.KindApprovalVoided + " " + c.ID + " " + gates.SystemActor,
				audit.KindApprovalRequested + " " + c2.ID + " alice",
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("audit entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestList(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			a := e.request("act-1", findings.RiskCritical, "h1")
			e.clock.Advance(time.Second)
			b := e.request("act-2", findings.RiskMedium, "h1")
			decide(e, a.ID, "bob", true, "")
			decide(e, b.ID, "bob", true, "")
			all, err := e.gate.List(ctx, gates.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(all) != 2 || all[0].ID != a.ID || all[1].ID != b.ID || len(all[0].Decisions) != 1 || all[0].Decisions[0].Actor != "bob" {
				t.Fatalf("List = %+v", all)
			}
			pending, err := e.gate.List(ctx, gates.Filter{States: []gates.State{gates.StatePending}})
			if err != nil {
				t.Fatal(err)
			}
			if len(pending) != 1 || pending[0].ID != a.ID {
				t.Errorf("pending = %+v, want only %s", pending, a.ID)
			}
			one, err := e.gate.List(ctx, gates.Filter{ActionID: "act-2"})
			if err != nil {
				t.Fatal(err)
			}
			if len(one) != 1 || one[0].State != gates.StateApproved {
				t.Errorf("act-2's requests = %+v", one)
			}
			if _, err := e.gate.Get(ctx, "apr-nope"); !errors.Is(err, gates.ErrNotFound) {
				t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
			}
		})
	}
}

func TestGet_refusesCorruptTimes(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskMedium, "h1")
			db, _ := storetest.RawDB(t, e.dsn)
			exec(t, db, `UPDATE approval_requests SET expires_at = 'tomorrow'`)
			if _, err := e.gate.Get(ctx, r.ID); err == nil || !strings.Contains(err.Error(), "expires_at") {
				t.Errorf("Get with a corrupt expiry: %v, want an error naming expires_at", err)
			}
			exec(t, db, `UPDATE approval_requests SET expires_at = ''`)
			if _, err := e.gate.Decide(ctx, r.ID, "bob", "cli", true, ""); err == nil {
				t.Error("decided a request with no expiry; an empty expiry must not read as never")
			}
		})
	}
}

func TestApproved_refusedRiskNoLongerCounts(t *testing.T) {
	e := newEnv(t, storetest.Backends(t)["sqlite"], testConfig)
	r := e.request("act-1", findings.RiskHigh, "h1")
	decide(e, r.ID, "bob", true, "")
	if ok, err := approved(e, "act-1", "h1"); err != nil || !ok {
		t.Fatalf("approved = %v, %v; want true", ok, err)
	}
	cfg := testConfig
	cfg.Refuse = []findings.Risk{findings.RiskHigh}
	e.gate = gates.New(e.st, e.log, cfg, e.clock.Now)
	if ok, err := approved(e, "act-1", "h1"); err != nil || ok {
		t.Errorf("approved under rules refusing high risk = %v, %v; want false", ok, err)
	}
	if ok, err := approved(e, "act-2", "h1"); err != nil || ok {
		t.Errorf("approved with no request = %v, %v; want false", ok, err)
	}
}

// A channel that authorized its user itself (a Slack approver) decides without being in
// gates.approvers; the requester and a second decision are refused as through the CLI.
func TestDecideAuthorized_channelVouchesForTheApprover(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			e := newEnv(t, mk, testConfig)
			r := e.request("act-1", findings.RiskCritical, "h1")
			if _, err := e.gate.Decide(ctx, r.ID, "slack:U0ERIN", "slack", true, ""); !errors.Is(err, gates.ErrNotApprover) {
				t.Fatalf("Decide by an unlisted user: %v, want ErrNotApprover", err)
			}
			if _, err := e.gate.DecideAuthorized(ctx, r.ID, "alice", "slack", true, ""); !errors.Is(err, gates.ErrSelfApproval) {
				t.Fatalf("the requester through Slack: %v, want ErrSelfApproval", err)
			}
			got, err := e.gate.DecideAuthorized(ctx, r.ID, "slack:U0ERIN", "slack", true, "")
			if err != nil || got.State != gates.StatePending || len(got.Approvals()) != 1 {
				t.Fatalf("authorized approval: %+v, %v", got, err)
			}
			if _, err := e.gate.DecideAuthorized(ctx, r.ID, "slack:U0ERIN", "slack", true, ""); !errors.Is(err, gates.ErrAlreadyDecided) {
				t.Fatalf("second click: %v, want ErrAlreadyDecided", err)
			}
			got = decide(e, r.ID, "bob", true, "")
			if got.State != gates.StateApproved {
				t.Fatalf("after bob: %+v", got)
			}
			if d, ok := got.DecisionBy("slack:U0ERIN"); !ok || d.Channel != gates.ChannelSlack {
				t.Errorf("the Slack decision: %+v, %v", d, ok)
			}
		})
	}
}

// The store keeps times as RFC 3339 text with only the fraction digits they need, so
// expiry compares as text only to the second; what is due within the current second is
// decided exactly.
func TestExpireDue_withinTheSecond(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg := testConfig
			cfg.Expiry = time.Hour
			e := newEnv(t, mk, cfg)
			t0 := e.clock.Now().Add(cfg.Expiry).Truncate(time.Second).Add(time.Second)
			now := t0.Add(500 * time.Millisecond)
			cases := []struct {
				expires time.Time
				want    gates.State
			}{
				{t0.Add(-time.Second), gates.StateExpired},
				{t0, gates.StateExpired},
				{now.Add(-time.Nanosecond), gates.StateExpired},
				{now, gates.StateExpired},
				{now.Add(time.Nanosecond), gates.StatePending},
				{t0.Add(999 * time.Millisecond), gates.StatePending},
				{t0.Add(time.Second), gates.StatePending},
			}
			ids := make([]string, len(cases))
			for i, c := range cases {
				e.clock.Advance(c.expires.Add(-cfg.Expiry).Sub(e.clock.Now()))
				ids[i] = e.request(fmt.Sprintf("act-%d", i), findings.RiskMedium, "h1").ID
			}
			e.clock.Advance(now.Sub(e.clock.Now()))
			if err := e.st.InTx(ctx, func(tx *store.Tx) error {
				_, err := e.gate.ExpireDue(ctx, tx)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			for i, c := range cases {
				if got := e.get(ids[i]).State; got != c.want {
					t.Errorf("expiring at %s, now %s: %s, want %s", c.expires.Format(time.RFC3339Nano), now.Format(time.RFC3339Nano), got, c.want)
				}
			}
		})
	}
}
