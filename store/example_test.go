package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/store"
)

// exampleAt is the examples' clock, so that their output holds still.
var exampleAt = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// sshOpen is a finding of the examples: a security group open to the internet on SSH.
func sshOpen() findings.Finding {
	const policy, account, sg = "WARDEN-AWS-NET-001", "111122223333", "arn:aws:ec2:eu-west-1:111122223333:security-group/sg-0a1b"
	return findings.Finding{Policy: policy, Severity: findings.High, Resource: sg, ResourceType: "aws.ec2.security_group",
		Account: account, Region: "eu-west-1", Scope: "aws/111122223333/ec2/eu-west-1", Message: "sg-0a1b opens SSH to 0.0.0.0/0",
		Fingerprint: findings.Fingerprint(policy, account, sg, "ingress/tcp/22-22/0.0.0.0/0"), Status: findings.StatusOpen}
}

// openExample opens a fresh store in a temporary directory; done closes and removes it.
func openExample(ctx context.Context) (st *store.Store, done func(), err error) {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		return nil, nil, err
	}
	if st, err = store.Open(ctx, filepath.Join(dir, "warden.db")); err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	return st, func() { st.Close(); os.RemoveAll(dir) }, nil
}

// Open takes a SQLite file path (created and migrated) or a PostgreSQL URL; OpenExisting
// refuses a history that is not there rather than start an empty one.
func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "store-example")
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "state", "warden.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	fmt.Println(st.Dialect())

	_, err = store.OpenExisting(ctx, filepath.Join(dir, "misspelt.db"))
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// sqlite
	// true
}

// A scan and the audit entry that records it are one change: InTx commits both, and
// what it committed reads back.
func ExampleStore_InTx() {
	ctx := context.Background()
	st, done, err := openExample(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	log := audit.New(st, audit.Options{Now: func() time.Time { return exampleAt }})

	err = st.InTx(ctx, func(tx *store.Tx) error {
		rec := &store.ScanRecord{StartedAt: exampleAt, FinishedAt: exampleAt, Snapshot: "acme", CollectedAt: exampleAt,
			Resources: 1, Policies: 1, Scopes: map[string]string{"aws/111122223333/ec2/eu-west-1": "ok"}}
		id, _, err := tx.SaveScan(ctx, rec, []findings.Finding{sshOpen()}, func(string) bool { return true }, nil)
		if err != nil {
			return err
		}
		_, err = log.Append(ctx, tx, audit.Event{Actor: "warden", Kind: audit.KindScanRecorded, Subject: fmt.Sprintf("scan/%d", id)})
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}

	scans, err := st.Scans(ctx, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range scans {
		fmt.Println("scan", s.ID, s.Snapshot, s.Resources, "resource", s.Scopes)
		fs, err := st.Findings(ctx, s.ID)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, f := range fs {
			fmt.Println(" ", f.Policy, f.Status, "first seen", f.FirstSeen.Format(time.DateOnly))
		}
	}
	entries, err := log.Entries(ctx, 0, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range entries {
		fmt.Println("audit", e.Seq, e.Kind, e.Subject)
	}
	// Output:
	// scan 1 acme 1 resource map[aws/111122223333/ec2/eu-west-1:ok]
	//   WARDEN-AWS-NET-001 open first seen 2026-12-01
	// audit 0 scan.recorded scan/1
}

// A function that fails rolls back everything it wrote: no scan without its audit
// entry.
func ExampleStore_InTx_rollback() {
	ctx := context.Background()
	st, done, err := openExample(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	err = st.InTx(ctx, func(tx *store.Tx) error {
		rec := &store.ScanRecord{StartedAt: exampleAt, FinishedAt: exampleAt, Snapshot: "acme", CollectedAt: exampleAt}
		if _, _, err := tx.SaveScan(ctx, rec, []findings.Finding{sshOpen()}, func(string) bool { return true }, nil); err != nil {
			return err
		}
		return errors.New("record the scan in the audit log: disk full")
	})
	fmt.Println(err)
	scans, err := st.Scans(ctx, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(scans), "scans")
	// Output:
	// record the scan in the audit log: disk full
	// 0 scans
}

// A finding the next scan does not see again is resolved only when that scan read its
// scope completely: here the scope failed, so the finding is carried over as unknown.
func ExampleStore_SaveScan() {
	ctx := context.Background()
	st, done, err := openExample(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()

	first := &store.ScanRecord{StartedAt: exampleAt, FinishedAt: exampleAt, Snapshot: "monday", CollectedAt: exampleAt}
	if _, _, err := st.SaveScan(ctx, first, []findings.Finding{sshOpen()}, func(string) bool { return true }, nil); err != nil {
		fmt.Println(err)
		return
	}
	next := exampleAt.Add(24 * time.Hour)
	second := &store.ScanRecord{StartedAt: next, FinishedAt: next, Snapshot: "tuesday", CollectedAt: next,
		Scopes: map[string]string{"aws/111122223333/ec2/eu-west-1": "failed"}}
	complete := func(scope string) bool { return second.Scopes[scope] != "failed" }
	id, stored, err := st.SaveScan(ctx, second, nil, complete, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range stored {
		fmt.Println("scan", id, f.Policy, f.Status, "first seen", f.FirstSeen.Format(time.DateOnly))
	}
	// Output:
	// scan 2 WARDEN-AWS-NET-001 unknown first seen 2026-12-01
}
