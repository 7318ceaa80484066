package serve

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/gates/sign"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
	"github.com/warden-sec/warden/store/storetest"
)

// TestSigningGate: unchecked, serve warns that decisions are unchecked names; checked,
// the channels' gate signs with the replica's key (made on first use), a web decision
// counts once that key is listed under @replicas and is refused before, with a warning
// that names the key to list.
func TestSigningGate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := storetest.Open(t, storetest.Backends(t)["sqlite"](t))
	log := audit.New(st, audit.Options{})
	keyFile := filepath.Join(dir, "replica.key")
	var logs bytes.Buffer
	opts := func(gc gates.Config) RunOptions {
		logs.Reset()
		return RunOptions{Config: &config.Config{Gates: gc}, Store: st, Log: log, Gate: gates.New(st, log, gc, nil),
			Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	}
	unchecked := opts(gates.Config{Approvers: []string{"bob"}, UncheckedNames: true})
	if g, err := unchecked.signingGate(); err != nil || g != unchecked.Gate || !strings.Contains(logs.String(), "decisions are unchecked names") {
		t.Fatalf("unchecked: %v, same gate %v, logs %s", err, g == unchecked.Gate, logs.String())
	}

	bob, err := sign.LoadOrCreateKey(filepath.Join(dir, "bob.key"))
	if err != nil {
		t.Fatal(err)
	}
	gc := gates.Config{Approvers: []string{"bob", "dave"}, ReplicaKeyFile: keyFile,
		Signers: map[string][]string{"bob": {sign.AuthorizedKey(bob.PublicKey())}, "dave": {sign.AuthorizedKey(bob.PublicKey())}}}
	decide := func(o RunOptions, action string) (gates.Request, error) {
		t.Helper()
		g, err := o.signingGate()
		if err != nil {
			t.Fatal(err)
		}
		var r gates.Request
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			r, err = g.Request(ctx, tx, remediators.Action{ID: action, Remediator: "aws.ec2.revoke_ingress", Target: "sg-1", Risk: findings.RiskMedium}, "h-"+action, "alice")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return g.Decide(ctx, r.ID, "dave", string(gates.ChannelWeb), true, "")
	}
	if _, err := decide(opts(gc), "act-1"); !errors.Is(err, gates.ErrUnsigned) || !strings.Contains(logs.String(), "not listed under gates.signers.@replicas") {
		t.Fatalf("replica key not listed: %v\n%s", err, logs.String())
	}
	pub, err := os.ReadFile(keyFile + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	gc.Signers[sign.Replicas] = []string{strings.TrimSpace(string(pub))}
	r, err := decide(opts(gc), "act-2")
	if err != nil || r.State != gates.StateApproved {
		t.Fatalf("replica key listed: %+v %v\n%s", r, err, logs.String())
	}
	k, _ := sign.ParseKey(string(pub))
	if r.Decisions[0].Signer != sign.Fingerprint(k) || r.Decisions[0].Channel != gates.ChannelWeb {
		t.Errorf("the web decision's signer %s, want the replica's %s", r.Decisions[0].Signer, sign.Fingerprint(k))
	}
}

// TestReplicaSigner: $WARDEN_REPLICA_KEY wins over the key file and creates none; a
// broken value is refused naming the variable, never quoting it.
func TestReplicaSigner(t *testing.T) {
	dir := t.TempDir()
	made, err := sign.LoadOrCreateKey(filepath.Join(dir, "made.key"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(filepath.Join(dir, "made.key"))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "unused.key")
	s, from, err := replicaSigner(gates.Config{ReplicaKeyFile: file}, string(text))
	if err != nil || from != "$"+sign.ReplicaKeyEnv || sign.Fingerprint(s.PublicKey()) != sign.Fingerprint(made.PublicKey()) {
		t.Fatalf("from the environment: %v %q", err, from)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a key file was made beside a key in the environment: %v", err)
	}
	const broken = "-----BEGIN OPENSSH PRIVATE KEY-----\nc2VjcmV0LXBhcnQ=\n-----END OPENSSH PRIVATE KEY-----\n"
	if _, _, err := replicaSigner(gates.Config{ReplicaKeyFile: file}, broken); err == nil || !strings.Contains(err.Error(), sign.ReplicaKeyEnv) || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("a broken key in the environment: %v", err)
	}
	if s, from, err := replicaSigner(gates.Config{ReplicaKeyFile: file}, ""); err != nil || from != file || s == nil {
		t.Errorf("from the file: %v %q", err, from)
	}
}
