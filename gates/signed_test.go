package gates_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func signer(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func authorized(s ssh.Signer) string {
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey())))
}

// keys are the signing keys of a checked test: one per approver, the replica's, and one
// nobody lists.
type keys struct{ bob, carol, dave, replica, mallory ssh.Signer }

func checkedConfig(t testing.TB) (gates.Config, keys) {
	k := keys{signer(t), signer(t), signer(t), signer(t), signer(t)}
	return gates.Config{Approvers: []string{"bob", "carol", "dave"}, Signers: map[string][]string{
		"bob": {authorized(k.bob)}, "carol": {authorized(k.carol)}, "dave": {authorized(k.dave)},
		sign.Replicas: {authorized(k.replica)}}}, k
}

func TestDecide_checkedNeedsTheActorsKey(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg, k := checkedConfig(t)
			e := newEnv(t, mk, cfg)
			ctx := context.Background()
			r := e.request("act-1", findings.RiskMedium, "h1")
			for _, tc := range []struct {
				name    string
				g       *gates.Gate
				actor   string
				channel gates.Channel
			}{
				{"unsigned", e.gate, "carol", gates.ChannelCLI},
				{"carol's name, mallory's key", e.gate.WithSigner(k.mallory), "carol", gates.ChannelCLI},
				{"carol's name, bob's key", e.gate.WithSigner(k.bob), "carol", gates.ChannelCLI},
				{"the CLI signed by the replica", e.gate.WithSigner(k.replica), "carol", gates.ChannelCLI},
				{"the web signed by carol, not the replica", e.gate.WithSigner(k.carol), "carol", gates.ChannelWeb},
				{"the web unsigned", e.gate, "carol", gates.ChannelWeb},
			} {
				if _, err := tc.g.Decide(ctx, r.ID, tc.actor, string(tc.channel), true, ""); !errors.Is(err, gates.ErrUnsigned) {
					t.Errorf("%s: Decide = %v, want ErrUnsigned", tc.name, err)
				}
			}
			if got := e.get(r.ID); got.State != gates.StatePending || len(got.Decisions) != 0 {
				t.Fatalf("a refused decision left %+v", got)
			}
			out, err := e.gate.WithSigner(k.carol).Decide(ctx, r.ID, "carol", string(gates.ChannelCLI), true, "")
			if err != nil {
				t.Fatal(err)
			}
			fp := sign.Fingerprint(k.carol.PublicKey())
			if out.State != gates.StateApproved || out.Decisions[0].Signer != fp || !strings.Contains(out.Decisions[0].Signature, "BEGIN SSH SIGNATURE") {
				t.Fatalf("signed approval: %+v", out)
			}
			var found bool
			for _, a := range e.entries() {
				if a.Kind == audit.KindApprovalApproved && a.Subject == r.ID {
					found = a.Data["signer"] == fp
				}
			}
			if !found {
				t.Errorf("the approval's audit entry does not name the key %s: %+v", fp, e.entries())
			}
			// A web decision signed by the replica counts.
			r2 := e.request("act-2", findings.RiskMedium, "h2")
			if _, err := e.gate.WithSigner(k.replica).Decide(ctx, r2.ID, "dave", string(gates.ChannelWeb), false, "not now"); err != nil {
				t.Fatal(err)
			}
			// Checking again finds nothing forged.
			for _, id := range []string{r.ID, r2.ID} {
				if got := e.check(id); len(got) != 0 {
					t.Errorf("%s: forgeries %v among signed decisions", id, got)
				}
			}
		})
	}
}

// check runs Gate.Check on request id in its own transaction.
func (e *env) check(id string) []gates.Forgery {
	e.t.Helper()
	var forged []gates.Forgery
	err := e.st.InTx(context.Background(), func(tx *store.Tx) error {
		var err error
		_, forged, err = e.gate.Check(context.Background(), tx, e.get(id))
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return forged
}

// TestCheck_forgedDecisionsCountAsNone: rows written into the database by hand, and a
// valid signature moved to a request for another content hash, count as no decision,
// are audited once as approval.forged and are gone; the request is pending again.
func TestCheck_forgedDecisionsCountAsNone(t *testing.T) {
	for name, mk := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			cfg, k := checkedConfig(t)
			e := newEnv(t, mk, cfg)
			ctx := context.Background()
			db, _ := storetest.RawDB(t, e.dsn)
			q := func(s string, args ...any) {
				t.Helper()
				if name == "postgres" {
					s = dollar(s)
				}
				if _, err := db.Exec(s, args...); err != nil {
					t.Fatal(err)
				}
			}
			// A signed approval of h1 …
			r1 := e.request("act-1", findings.RiskMedium, "h1")
			ok, err := e.gate.WithSigner(k.bob).Decide(ctx, r1.ID, "bob", string(gates.ChannelCLI), true, "")
			if err != nil {
				t.Fatal(err)
			}
			// … copied onto the request of another action's content, and a bare row.
			r2 := e.request("act-2", findings.RiskCritical, "h2")
			q(`INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at, signature, signer) VALUES (?, 'bob', 'cli', 'approve', '', ?, ?, ?)`,
				r2.ID, store.FormatTime(e.clock.Now()), ok.Decisions[0].Signature, ok.Decisions[0].Signer)
			q(`INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at) VALUES (?, 'carol', 'cli', 'approve', '', ?)`,
				r2.ID, store.FormatTime(e.clock.Now()))
			q(`UPDATE approval_requests SET state = 'approved', decided_at = ? WHERE id = ?`, store.FormatTime(e.clock.Now()), r2.ID)

			forged := e.check(r2.ID)
			if len(forged) != 2 {
				t.Fatalf("forgeries = %+v, want bob's and carol's", forged)
			}
			got := e.get(r2.ID)
			if got.State != gates.StatePending || len(got.Decisions) != 0 {
				t.Fatalf("after the check: %+v, want pending without decisions", got)
			}
			if n := e.kinds(r2.ID)[audit.KindApprovalForged]; n != 2 {
				t.Fatalf("%d approval.forged entries, want 2", n)
			}
			if again := e.check(r2.ID); len(again) != 0 || e.kinds(r2.ID)[audit.KindApprovalForged] != 2 {
				t.Fatalf("a second check found %v: a forgery is reported once", again)
			}
			// The real carol decides after her name was forged.
			if _, err := e.gate.WithSigner(k.carol).Decide(ctx, r2.ID, "carol", string(gates.ChannelCLI), true, ""); err != nil {
				t.Fatalf("carol's own decision after the forgery: %v", err)
			}
			if got := e.get(r2.ID); got.State != gates.StatePending || len(got.Approvals()) != 1 {
				t.Fatalf("critical needs 2: %+v", got)
			}
			// The original stands.
			if got := e.check(r1.ID); len(got) != 0 {
				t.Fatalf("a valid approval was taken for a forgery: %v", got)
			}
			// A forged deny ends nothing: the request is pending again.
			r3 := e.request("act-3", findings.RiskMedium, "h3")
			q(`INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at) VALUES (?, 'dave', 'web', 'deny', 'no', ?)`,
				r3.ID, store.FormatTime(e.clock.Now()))
			q(`UPDATE approval_requests SET state = 'denied', decided_at = ? WHERE id = ?`, store.FormatTime(e.clock.Now()), r3.ID)
			if f := e.check(r3.ID); len(f) != 1 || f[0].Vote != gates.VoteDeny || e.get(r3.ID).State != gates.StatePending {
				t.Fatalf("a forged deny: %v, request %s", f, e.get(r3.ID).State)
			}
		})
	}
}

// TestUnchecked_decisionsAsBefore: without signers nothing is signed or checked.
func TestUnchecked_decisionsAsBefore(t *testing.T) {
	e := newEnv(t, storetest.Backends(t)["sqlite"], testConfig)
	r := e.request("act-1", findings.RiskMedium, "h1")
	out, err := e.gate.Decide(context.Background(), r.ID, "carol", string(gates.ChannelCLI), true, "")
	if err != nil || out.State != gates.StateApproved || out.Decisions[0].Signature != "" {
		t.Fatalf("unchecked Decide = %+v, %v", out, err)
	}
	if got := e.check(r.ID); len(got) != 0 {
		t.Fatalf("unchecked Check found %v", got)
	}
}

// TestDecideCLI_signsWithTheAgent: without --sign-key, warden approve signs with the key
// of the actor's that ssh-agent holds; an agent holding none of them is refused.
func TestDecideCLI_signsWithTheAgent(t *testing.T) {
	cfg, _ := checkedConfig(t)
	_, carolPriv, _ := ed25519.GenerateKey(rand.Reader)
	carol, _ := ssh.NewSignerFromKey(carolPriv)
	cfg.Signers["carol"] = []string{authorized(carol)}
	e := newEnv(t, storetest.Backends(t)["sqlite"], cfg)
	kr := agent.NewKeyring()
	if err := kr.Add(agent.AddedKey{PrivateKey: carolPriv}); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "agent")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); agent.ServeAgent(kr, c) }()
		}
	}()
	t.Setenv("SSH_AUTH_SOCK", filepath.Join(dir, "sock"))
	ctx := context.Background()
	r := e.request("act-1", findings.RiskCritical, "h1")
	var warn strings.Builder
	// bob's keys are not in the agent.
	if _, err := e.gate.DecideCLI(ctx, r.ID, "bob", true, "", "", &warn); !errors.Is(err, gates.ErrUnsigned) {
		t.Fatalf("bob without his key in the agent: %v", err)
	}
	out, err := e.gate.DecideCLI(ctx, r.ID, "carol", true, "", "", &warn)
	if err != nil || out.Decisions[0].Signer != sign.Fingerprint(carol.PublicKey()) || warn.Len() != 0 {
		t.Fatalf("carol through the agent: %+v %v (warned %q)", out, err, warn.String())
	}
}

// TestCurrent_neverShowsAForgedDecision: warden approvals list (Current) checks what it
// lists, so a row written by hand shows neither as a decision nor as an approved request,
// and is audited once, by the first list that sees it.
func TestCurrent_neverShowsAForgedDecision(t *testing.T) {
	cfg, _ := checkedConfig(t)
	e := newEnv(t, storetest.Backends(t)["sqlite"], cfg)
	db, _ := storetest.RawDB(t, e.dsn)
	r := e.request("act-1", findings.RiskMedium, "h1")
	for _, s := range []string{
		`INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at) VALUES (?, 'carol', 'cli', 'approve', '', ?)`,
		`UPDATE approval_requests SET state = 'approved', decided_at = ? WHERE id = ?`,
	} {
		args := []any{r.ID, store.FormatTime(e.clock.Now())}
		if strings.HasPrefix(s, "UPDATE") {
			args = []any{args[1], args[0]}
		}
		if _, err := db.Exec(s, args...); err != nil {
			t.Fatal(err)
		}
	}
	for _, all := range []bool{false, true} {
		got, err := e.gate.Current(context.Background(), all)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != r.ID || got[0].State != gates.StatePending || len(got[0].Decisions) != 0 {
			t.Fatalf("Current(all=%v) = %+v, want %s pending without decisions", all, got, r.ID)
		}
	}
	if n := e.kinds(r.ID)[audit.KindApprovalForged]; n != 1 {
		t.Errorf("%d approval.forged entries, want 1", n)
	}
}
