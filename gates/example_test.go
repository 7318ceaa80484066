package gates_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// A critical fix waits for two approvers; its requester cannot approve it. Each decision
// is signed with its approver's SSH key, which gates.signers lists: a name without its
// key decides nothing.
func ExampleGate_Decide() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "gates-example")
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	now := func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	// In real use each approver's key stays with its approver (ssh-agent, or warden
	// approve --sign-key); the config lists only the public halves.
	bob, carol := exampleKey(), exampleKey()
	cfg := gates.Config{Approvers: []string{"bob", "carol"}, Signers: map[string][]string{ // critical: 2 approvals by default
		"bob":   {sign.AuthorizedKey(bob.PublicKey())},
		"carol": {sign.AuthorizedKey(carol.PublicKey())},
	}}
	g := gates.New(st, audit.New(st, audit.Options{Now: now}), cfg, now)

	fix := remediators.Action{ID: "act-1", Remediator: "aws.iam.detach_policy", Target: "arn:aws:iam::111122223333:user/ci",
		Part: "arn:aws:iam::aws:policy/AdministratorAccess", Risk: findings.RiskCritical}
	fmt.Println(cfg.Verdict(fix.Risk).Kind, cfg.Verdict(fix.Risk).Quorum)

	var req gates.Request
	err = st.InTx(ctx, func(tx *store.Tx) error {
		req, err = g.Request(ctx, tx, fix, "content-hash-1", "alice")
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = g.Decide(ctx, req.ID, "alice", "cli", true, "")
	fmt.Println(errors.Is(err, gates.ErrSelfApproval))
	_, err = g.Decide(ctx, req.ID, "bob", "cli", true, "") // the name alone
	fmt.Println(errors.Is(err, gates.ErrUnsigned))
	_, err = g.WithSigner(carol).Decide(ctx, req.ID, "bob", "cli", true, "") // carol's key, bob's name
	fmt.Println(errors.Is(err, gates.ErrUnsigned))
	req, _ = g.WithSigner(bob).Decide(ctx, req.ID, "bob", "cli", true, "")
	fmt.Println(req.State, len(req.Approvals()), "of", req.Quorum)
	req, _ = g.WithSigner(carol).Decide(ctx, req.ID, "carol", "cli", true, "CHG-1234")
	fmt.Println(req.State, len(req.Approvals()), "of", req.Quorum, req.Decisions[1].Signer == sign.Fingerprint(carol.PublicKey()))
	// Output:
	// approval 2
	// true
	// true
	// true
	// pending 1 of 2
	// approved 2 of 2 true
}

// exampleKey is a new Ed25519 SSH key, as ssh-keygen -t ed25519 makes.
func exampleKey() ssh.Signer {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		panic(err)
	}
	return s
}

// openGate is a gate of cfg over a fresh SQLite store, read by the clock now; done
// closes the store and removes it.
func openGate(ctx context.Context, cfg gates.Config, now func() time.Time) (g *gates.Gate, st *store.Store, done func(), err error) {
	dir, err := os.MkdirTemp("", "gates-example")
	if err != nil {
		return nil, nil, nil, err
	}
	st, err = store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, err
	}
	done = func() {
		st.Close()
		os.RemoveAll(dir)
	}
	return gates.New(st, audit.New(st, audit.Options{Now: now}), cfg, now), st, done, nil
}

// request asks for the approval of fix as bound to hash, in a transaction of its own.
func request(ctx context.Context, g *gates.Gate, st *store.Store, fix remediators.Action, hash, requester string) (req gates.Request, err error) {
	err = st.InTx(ctx, func(tx *store.Tx) error {
		req, err = g.Request(ctx, tx, fix, hash, requester)
		return err
	})
	return req, err
}

// One deny ends a request, whatever the quorum: a deny says why, and no approval comes
// after it.
func ExampleGate_Decide_deny() {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	g, st, done, err := openGate(ctx, gates.Config{Approvers: []string{"bob", "carol"}, UncheckedNames: true}, now) // names, as in a demo: the rules, not the signatures
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	fix := remediators.Action{ID: "act-2", Remediator: "aws.ec2.revoke_ingress", Target: "arn:aws:ec2:eu-west-1:111122223333:security-group/sg-0a1b",
		Part: "ingress/tcp/22-22/0.0.0.0/0", Risk: findings.RiskMedium}
	req, err := request(ctx, g, st, fix, "content-hash-1", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}

	_, err = g.Decide(ctx, req.ID, "bob", "cli", false, "")
	fmt.Println(errors.Is(err, gates.ErrDenyNeedsReason))
	req, _ = g.Decide(ctx, req.ID, "bob", "cli", false, "the bastion still needs it until Friday")
	fmt.Println(req.State, req.State.Final())
	_, err = g.Decide(ctx, req.ID, "carol", "web", true, "")
	fmt.Println(errors.Is(err, gates.ErrAlreadyDecided))
	// Output:
	// true
	// denied true
	// true
}

// An approval binds to the action's content: when the action changes (another content
// hash), the approval of the old one is voided and the new one waits for its own.
func ExampleGate_Request() {
	ctx := context.Background()
	now := func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	g, st, done, err := openGate(ctx, gates.Config{Approvers: []string{"bob"}, UncheckedNames: true}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	fix := remediators.Action{ID: "act-3", Remediator: "aws.iam.deactivate_access_key", Target: "arn:aws:iam::111122223333:user/ci/accesskey/AKIAEXAMPLE",
		Risk: findings.RiskHigh}
	old, err := request(ctx, g, st, fix, "content-hash-1", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := g.Decide(ctx, old.ID, "bob", "slack", true, ""); err != nil {
		fmt.Println(err)
		return
	}
	approved := func(hash string) bool {
		var ok bool
		err := st.Read(ctx, func(r *store.Reader) error {
			ok, err = g.Approved(ctx, r, fix.ID, hash)
			return err
		})
		return err == nil && ok
	}
	fmt.Println("before the change:", approved("content-hash-1"))

	fix.Params = map[string]any{"user": "ci"} // the plan changed the action
	req, err := request(ctx, g, st, fix, "content-hash-2", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	old, _ = g.Get(ctx, old.ID)
	fmt.Println("old:", old.State, approved("content-hash-1"))
	fmt.Println("new:", req.State, approved("content-hash-2"))
	// Output:
	// before the change: true
	// old: voided false
	// new: pending false
}

// A request nobody answers expires; deciding it afterwards is refused.
func ExampleGate_ExpireDue() {
	ctx := context.Background()
	clock := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	g, st, done, err := openGate(ctx, gates.Config{Approvers: []string{"bob"}, Expiry: 4 * time.Hour, UncheckedNames: true}, now)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	fix := remediators.Action{ID: "act-4", Remediator: "gcp.iam.disable_service_account_key",
		Target: "//iam.googleapis.com/projects/p/serviceAccounts/ci@p.iam.gserviceaccount.com/keys/k1", Risk: findings.RiskMedium}
	req, err := request(ctx, g, st, fix, "content-hash-1", "alice")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(req.State, "until", req.ExpiresAt.Format(time.Kitchen))

	clock = clock.Add(5 * time.Hour)
	var expired int
	err = st.InTx(ctx, func(tx *store.Tx) (err error) {
		expired, err = g.ExpireDue(ctx, tx)
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(expired, "expired")
	_, err = g.Decide(ctx, req.ID, "bob", "cli", true, "")
	fmt.Println(errors.Is(err, gates.ErrExpired))
	// Output:
	// pending until 1:00PM
	// 1 expired
	// true
}
