package gates_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// A critical fix waits for two approvers; its requester cannot approve it.
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
	cfg := gates.Config{Approvers: []string{"bob", "carol"}} // critical: 2 approvals by default
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
	req, _ = g.Decide(ctx, req.ID, "bob", "cli", true, "")
	fmt.Println(req.State, len(req.Approvals()), "of", req.Quorum)
	req, _ = g.Decide(ctx, req.ID, "carol", "slack", true, "CHG-1234")
	fmt.Println(req.State, len(req.Approvals()), "of", req.Quorum)
	// Output:
	// approval 2
	// true
	// pending 1 of 2
	// approved 2 of 2
}
