package audit_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// An entry is appended in the transaction of the change it records; Verify then checks
// the whole log and its checkpoints.
func ExampleLog_Append() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "audit-example")
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "warden.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	skey, _, _ := note.GenerateKey(rand.Reader, audit.KeyName)
	signer, verifier, err := audit.ParseKey(skey)
	if err != nil {
		fmt.Println(err)
		return
	}
	log := audit.New(st, audit.Options{Signer: signer})

	err = st.InTx(ctx, func(tx *store.Tx) error {
		// … the state change itself, in tx …
		e, err := log.Append(ctx, tx, audit.Event{Actor: "carol", Kind: audit.KindApprovalApproved,
			Subject: "approval/7", Data: map[string]string{"reason": "change window"}})
		if err != nil {
			return err
		}
		fmt.Println("appended entry", e.Seq, e.Kind)
		return nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := log.Checkpoint(ctx); err != nil {
		fmt.Println(err)
		return
	}
	rep, err := log.Verify(ctx, verifier)
	if err != nil {
		fmt.Println("tampered:", err)
		return
	}
	fmt.Println(rep.Entries, "entries,", rep.Checkpoints, "checkpoint verified")
	// Output:
	// appended entry 0 approval.approved
	// 1 entries, 1 checkpoint verified
}
