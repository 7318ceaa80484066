package remediate_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

func sshKey(t *testing.T) ssh.Signer {
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

// TestSignedDecisions_onlyVerifiedOnesApply is issue 31's proof, with gates.signers
// listed: a decision written into the database by hand, and a valid signature moved to
// a request for other content, change nothing in the cloud (the simulator's write
// counters) and are audited as approval.forged and counted; a decision signed with the
// approver's listed key applies, and its audit entry names the key.
func TestSignedDecisions_onlyVerifiedOnesApply(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			bob, cfg := bobSigns(t)
			e := start(t, dsn(t), world(2), cfg)
			p := e.Plan(t, "alice")
			revokes := only(p, "aws.ec2.revoke_ingress", 2)
			if len(revokes.Actions) != 2 {
				t.Fatalf("plan: %d revoke actions, want 2", len(revokes.Actions))
			}
			one := revokes.Only(func(a remediate.PlannedAction) bool { return a.ID == revokes.Actions[0].ID })
			two := revokes.Only(func(a remediate.PlannedAction) bool { return a.ID == revokes.Actions[1].ID })
			forgedCount := 0
			alice := countingForgeries(e, &forgedCount)
			res, err := alice.Apply(ctx, revokes, true)
			if err != nil {
				t.Fatal(err)
			}
			req1, req2 := itemOf(t, res, one.Actions[0].ID).Request, itemOf(t, res, two.Actions[0].ID).Request
			if req1 == "" || req2 == "" {
				t.Fatalf("both wait for approval: %+v", res.Items)
			}

			db, driver := storetest.RawDB(t, e.DSN)
			exec := func(q string, args ...any) {
				t.Helper()
				if driver == "postgres" {
					n := 0
					var b strings.Builder
					for _, c := range q {
						if c == '?' {
							n++
							b.WriteString("$" + string(rune('0'+n)))
							continue
						}
						b.WriteRune(c)
					}
					q = b.String()
				}
				if _, err := db.Exec(q, args...); err != nil {
					t.Fatal(err)
				}
			}
			forge := func(req, signature, signer string) {
				t.Helper()
				exec(`INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at, signature, signer) VALUES (?, 'bob', 'cli', 'approve', 'by hand', ?, ?, ?)`,
					req, store.FormatTime(e.Now()), signature, signer)
				exec(`UPDATE approval_requests SET state = 'approved', decided_at = ? WHERE id = ?`, store.FormatTime(e.Now()), req)
			}
			applyNothing := func(why string) {
				t.Helper()
				e.Sim.ResetCalls()
				res, err := alice.Apply(ctx, one, true)
				if err != nil {
					t.Fatal(err)
				}
				if n := e.Sim.WriteCount(); n != 0 {
					t.Fatalf("%s: %d writes to the cloud (%v)", why, n, e.Sim.Writes())
				}
				if open, _ := e.SSHOpen(t, one.Actions[0].Target); !open {
					t.Fatalf("%s: the rule was revoked", why)
				}
				if it := itemOf(t, res, one.Actions[0].ID); it.State != remediate.StatePending {
					t.Fatalf("%s: %+v, want still pending", why, it)
				}
			}

			// (a) A decision inserted by hand, the request marked approved.
			forge(req1, "", "")
			applyNothing("a decision inserted by hand")
			if forgedCount != 1 || len(forgeries(t, e, req1)) != 1 {
				t.Fatalf("after the hand-made row: counted %d, audited %v", forgedCount, forgeries(t, e, req1))
			}

			// (c) bob signs his approval of the second action with his key: it applies.
			ok, err := e.Gate.WithSigner(bob).Decide(ctx, req2, "bob", string(gates.ChannelCLI), true, "")
			if err != nil {
				t.Fatal(err)
			}
			e.Sim.ResetCalls()
			res, err = alice.Apply(ctx, two, true)
			if err != nil {
				t.Fatal(err)
			}
			if it := itemOf(t, res, two.Actions[0].ID); it.State != remediate.StateVerified || !it.Wrote {
				t.Fatalf("the signed approval: %+v", it)
			}
			if open, _ := e.SSHOpen(t, two.Actions[0].Target); open || e.Sim.WriteCount() == 0 {
				t.Fatal("the signed approval did not change the cloud")
			}
			fp := sign.Fingerprint(bob.PublicKey())
			approved, err := e.Log.EntriesOfKind(ctx, audit.KindApprovalApproved)
			if err != nil || len(approved) != 1 || !strings.Contains(string(approved[0].Data), fp) {
				t.Fatalf("approval.approved entries %v (%v), want one naming %s", approved, err, fp)
			}

			// (d) bob's valid signature, moved onto the first action's request: it signs
			// another request and content hash, and counts as none.
			forge(req1, ok.Decisions[0].Signature, ok.Decisions[0].Signer)
			applyNothing("a signature of another content hash")
			if forgedCount != 2 || len(forgeries(t, e, req1)) != 2 {
				t.Fatalf("after the moved signature: counted %d, audited %v", forgedCount, forgeries(t, e, req1))
			}
			e.VerifyAudit(t)
		})
	}
}

// bobSigns returns bob's key and gates that ask bob, signing with it, to approve
// critical fixes.
func bobSigns(t *testing.T) (ssh.Signer, gates.Config) {
	t.Helper()
	bob := sshKey(t)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(bob.PublicKey())))
	cfg := gates.Config{Approvers: []string{"bob"}, Quorum: map[findings.Risk]int{findings.RiskCritical: 1}, Signers: map[string][]string{"bob": {line}}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return bob, cfg
}

// countingForgeries is e's machine acting as alice, adding to *forged the forgeries it
// finds.
func countingForgeries(e *remediatetest.Env, forged *int) *remediate.Machine {
	return remediate.New(remediate.Options{Store: e.Store, Log: e.Log, Gate: e.Gate, Gates: e.Gates, Registry: e.Registry,
		Observer: remediate.Readers{e.Reader}, Engine: e.Engine, Actor: "alice", Now: e.Now,
		Forged: func(n int) { *forged += n }})
}

// forgeries are the approval.forged entries of request id.
func forgeries(t *testing.T, e *remediatetest.Env, id string) []map[string]any {
	t.Helper()
	es, err := e.Log.EntriesOfKind(context.Background(), audit.KindApprovalForged)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, en := range es {
		if en.Subject != id {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(en.Data, &m); err != nil {
			t.Fatal(err)
		}
		if m["actor"] != "bob" || m["why"] == "" {
			t.Errorf("forgery entry %v", m)
		}
		out = append(out, m)
	}
	return out
}
