package sign_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"

	"github.com/warden-sec/warden/gates/sign"
)

func newKey(t *testing.T) (ssh.Signer, ed25519.PrivateKey) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return s, priv
}

var dec = sign.Decision{Request: "apr-1", Content: "sha256:abc", Actor: "carol", Channel: "cli", Vote: "approve", Reason: ""}

func TestMessage_isCanonical(t *testing.T) {
	got := string(sign.Message(dec))
	want := "warden-decision v1\n" + `{"actor":"carol","channel":"cli","content":"sha256:abc","reason":"","request":"apr-1","vote":"approve"}`
	if got != want {
		t.Fatalf("Message =\n%s\nwant\n%s", got, want)
	}
	// A field's value cannot pass for another field: a newline or quote in the reason
	// is escaped.
	d := dec
	d.Reason = "ok\",\"actor\":\"mallory"
	if m := string(sign.Message(d)); strings.Count(m, `"actor":`) != 1 {
		t.Errorf("a reason injected a field: %s", m)
	}
}

func TestSignVerify(t *testing.T) {
	carol, _ := newKey(t)
	mallory, _ := newKey(t)
	sig, err := sign.Sign(dec, carol)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----") {
		t.Fatalf("not armored: %q", sig)
	}
	fp, err := sign.Verify(dec, sig, []ssh.PublicKey{mallory.PublicKey(), carol.PublicKey()})
	if err != nil || fp != sign.Fingerprint(carol.PublicKey()) {
		t.Fatalf("Verify = %q, %v; want %s", fp, err, sign.Fingerprint(carol.PublicKey()))
	}
	malSig, _ := sign.Sign(dec, mallory)
	changed := func(f func(*sign.Decision)) sign.Decision { d := dec; f(&d); return d }
	for _, tc := range []struct {
		name string
		d    sign.Decision
		sig  string
		keys []ssh.PublicKey
		want error
	}{
		{"unsigned", dec, "", []ssh.PublicKey{carol.PublicKey()}, sign.ErrUnsigned},
		{"another key", dec, malSig, []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
		{"no keys listed", dec, sig, nil, sign.ErrBadSignature},
		{"another content hash", changed(func(d *sign.Decision) { d.Content = "sha256:def" }), sig, []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
		{"another actor", changed(func(d *sign.Decision) { d.Actor = "dave" }), sig, []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
		{"another vote", changed(func(d *sign.Decision) { d.Vote = "deny" }), sig, []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
		{"another request", changed(func(d *sign.Decision) { d.Request = "apr-2" }), sig, []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
		{"garbage", dec, "-----BEGIN SSH SIGNATURE-----\nAAAA\n-----END SSH SIGNATURE-----\n", []ssh.PublicKey{carol.PublicKey()}, sign.ErrBadSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := sign.Verify(tc.d, tc.sig, tc.keys); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParseKey(t *testing.T) {
	s, _ := newKey(t)
	line := strings.TrimSpace(string(ssh.MarshalAuthorizedKey(s.PublicKey()))) + " carol@laptop"
	k, err := sign.ParseKey(line)
	if err != nil || sign.Fingerprint(k) != sign.Fingerprint(s.PublicKey()) {
		t.Fatalf("ParseKey = %v", err)
	}
	for _, bad := range []string{"", "ssh-ed25519", "not a key", line + "\n" + line} {
		if _, err := sign.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
}

// TestSSHKeygen_interoperates: a signature ssh-keygen -Y sign makes verifies, and one
// Sign makes passes ssh-keygen -Y verify: the format is ssh-keygen's.
func TestSSHKeygen_interoperates(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("no ssh-keygen")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "id")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "carol", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pubLine, _ := os.ReadFile(key + ".pub")
	pub, err := sign.ParseKey(string(pubLine))
	if err != nil {
		t.Fatal(err)
	}
	msg := filepath.Join(dir, "msg")
	os.WriteFile(msg, sign.Message(dec), 0o600)
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", sign.Namespace, "-f", key, msg).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	theirs, _ := os.ReadFile(msg + ".sig")
	if _, err := sign.Verify(dec, string(theirs), []ssh.PublicKey{pub}); err != nil {
		t.Fatalf("ssh-keygen's signature: %v", err)
	}

	s, err := sign.LoadKeyFile(key)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := sign.Sign(dec, s)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(msg+".sig", []byte(ours), 0o600)
	allowed := filepath.Join(dir, "allowed")
	os.WriteFile(allowed, []byte("carol "+string(pubLine)), 0o600)
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "carol", "-n", sign.Namespace, "-s", msg+".sig")
	cmd.Stdin = bytes.NewReader(sign.Message(dec))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y verify refused ours: %v\n%s", err, out)
	}
}

func TestAgentSigner(t *testing.T) {
	carol, priv := newKey(t)
	other, _ := newKey(t)
	kr := agent.NewKeyring()
	if err := kr.Add(agent.AddedKey{PrivateKey: priv}); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "ag")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
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
	if _, _, err := sign.AgentSigner(sock, []ssh.PublicKey{other.PublicKey()}); err == nil {
		t.Fatal("AgentSigner found a key the agent does not hold")
	}
	if _, _, err := sign.AgentSigner("", nil); err == nil {
		t.Fatal("AgentSigner without a socket")
	}
	s, done, err := sign.AgentSigner(sock, []ssh.PublicKey{other.PublicKey(), carol.PublicKey()})
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	sig, err := sign.Sign(dec, s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sign.Verify(dec, sig, []ssh.PublicKey{carol.PublicKey()}); err != nil {
		t.Fatal(err)
	}
}

func TestLoadKeyFile_refusesMissingFile(t *testing.T) {
	if _, err := sign.LoadKeyFile(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Fatal("no error")
	}
}

// TestLoadOrCreateKey: the replica's key is made once, 0600, with its public line
// beside it; read again it is the same key; one others may read is refused.
func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "replica.key")
	s, err := sign.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", info.Mode(), err)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	k, err := sign.ParseKey(string(pub))
	if err != nil || sign.Fingerprint(k) != sign.Fingerprint(s.PublicKey()) || sign.AuthorizedKey(k) != strings.Fields(string(pub))[0]+" "+strings.Fields(string(pub))[1] {
		t.Fatalf(".pub %q: %v", pub, err)
	}
	again, err := sign.LoadOrCreateKey(path)
	if err != nil || sign.Fingerprint(again.PublicKey()) != sign.Fingerprint(s.PublicKey()) {
		t.Fatalf("read again: %v", err)
	}
	os.Chmod(path, 0o644)
	if _, err := sign.LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a key others may read: %v", err)
	}
}

// TestLoadOrCreateKey_concurrent: replicas started together on one state directory
// (docs/replicas.md starts two at once) all get the one key published, never a file
// still being written by another.
func TestLoadOrCreateKey_concurrent(t *testing.T) {
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "replica.key")
		const n = 8
		fps := make(chan string, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for range n {
			wg.Go(func() {
				s, err := sign.LoadOrCreateKey(path)
				if err != nil {
					errs <- err
					return
				}
				fps <- sign.Fingerprint(s.PublicKey())
			})
		}
		wg.Wait()
		close(fps)
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", round, err)
		}
		seen := map[string]bool{}
		for fp := range fps {
			seen[fp] = true
		}
		pub, err := os.ReadFile(path + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		k, err := sign.ParseKey(string(pub))
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 1 || !seen[sign.Fingerprint(k)] {
			t.Fatalf("round %d: %d keys in use, .pub %s", round, len(seen), sign.Fingerprint(k))
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".replica-key-*")); len(left) > 0 {
			t.Fatalf("temporary files left: %v", left)
		}
	}
}
