package gates_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/yamlerr"
)

func pubLine(t *testing.T) string {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(k)))
}

func TestSigners_readAndChecked(t *testing.T) {
	bob, carol, rep := pubLine(t), pubLine(t), pubLine(t)
	c, err := decodeGates(`
gates:
  approvers: [bob, carol]
  signers:
    bob: "` + bob + ` bob@laptop"
    carol: ["` + carol + `"]
    "@replicas": ["` + rep + `"]
`)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Checked() || c.UncheckedWarning() != "" {
		t.Fatalf("signers listed, Checked=%v", c.Checked())
	}
	for _, n := range []string{"bob", "carol", "@replicas"} {
		if len(c.SignerKeys(n)) != 1 {
			t.Errorf("SignerKeys(%s) = %d keys, want 1", n, len(c.SignerKeys(n)))
		}
	}
	if len(c.SignerKeys("mallory")) != 0 {
		t.Error("keys for an unlisted name")
	}
}

// Checked is the default: approvers without keys are refused with a line that says what
// to do; unchecked names are taken only where the config says so, and warned about.
func TestUncheckedNames_onlyWhereTheConfigSaysSo(t *testing.T) {
	_, err := decodeGates("gates:\n  approvers: [bob]\n")
	if ce := yamlerr.Errors(err); len(ce) != 1 || ce[0].Line != 2 || ce[0].Field != "approvers" ||
		!strings.Contains(ce[0].Msg, "gates.signers lists no keys") || !strings.Contains(ce[0].Msg, "unchecked_names: true") {
		t.Errorf("approvers without signers: %v", err)
	}
	if err := (gates.Config{Approvers: []string{"bob"}}).Validate(); err == nil || !strings.Contains(err.Error(), "gates.signers lists no keys") {
		t.Errorf("Validate of approvers without signers: %v", err)
	}
	for _, in := range []string{"gates:\n", "gates:\n  auto: [low]\n"} {
		c, err := decodeGates(in)
		if err != nil || !c.Checked() || c.UncheckedWarning() != "" {
			t.Errorf("%q: checked %v, warning %q, err %v; want checked (nobody can decide yet)", in, c.Checked(), c.UncheckedWarning(), err)
		}
	}
	for _, in := range []string{"gates:\n  approvers: [bob, carol]\n  unchecked_names: true\n", "gates:\n  unchecked_names: True\n"} {
		plain, err := decodeGates(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if plain.Checked() || !strings.Contains(plain.UncheckedWarning(), "decisions are unchecked names") ||
			!strings.Contains(plain.UncheckedWarning(), "gates.signers") {
			t.Errorf("%q: Checked=%v, warning %q", in, plain.Checked(), plain.UncheckedWarning())
		}
	}
	for _, tt := range []struct{ in, msg string }{
		{"gates:\n  unchecked_names: yes\n", "gates.unchecked_names: want true or false"}, // YAML 1.2: a string
		{"gates:\n  unchecked_names: [true]\n", "gates.unchecked_names: want true or false"},
		{"gates:\n  approvers: [bob]\n  unchecked_names: true\n  signers: {bob: [\"" + pubLine(t) + "\"]}\n",
			"line 3: gates.unchecked_names: unchecked names and gates.signers exclude each other"},
	} {
		if _, err := decodeGates(tt.in); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%q: %v, want %q", tt.in, err, tt.msg)
		}
	}
}

// TestSigners_everyProblemWithItsLine: every problem of gates.signers at once, each with
// its line and field.
func TestSigners_everyProblemWithItsLine(t *testing.T) {
	bob := pubLine(t)
	_, err := decodeGates(`
gates:
  approvers: [bob, carol, dave]
  signers:
    bob: ["` + bob + `", "ssh-ed25519 notbase64"]
    carol: []
    mallory: ["` + bob + `"]
`)
	if err == nil {
		t.Fatal("accepted")
	}
	got := map[string]int{}
	for _, e := range yamlerr.Errors(err) {
		got[e.Field] = e.Line
	}
	want := map[string]int{"signers.bob[1]": 5, "signers.carol": 6, "signers.mallory": 7, "approvers[2]": 3}
	for f, l := range want {
		if got[f] != l {
			t.Errorf("field %s: line %d, want %d (all: %v)\n%v", f, got[f], l, got, err)
		}
	}
	if _, err := decodeGates("gates:\n  signers: [bob]\n"); err == nil || !strings.Contains(err.Error(), "want a mapping") {
		t.Errorf("a list for signers: %v", err)
	}
	// Validate judges a Config built in Go the same way.
	if err := (gates.Config{Approvers: []string{"bob", "carol"}, Signers: map[string][]string{"bob": {bob}}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), `"carol" has no key`) {
		t.Errorf("Validate: %v", err)
	}
}

func TestReplicaKeyFile(t *testing.T) {
	c, err := decodeGates("gates:\n  replica_key_file: /etc/warden/replica.key\n")
	if err != nil || c.ReplicaKeyFile != "/etc/warden/replica.key" {
		t.Fatalf("read %q, %v", c.ReplicaKeyFile, err)
	}
	for _, bad := range []string{"gates:\n  replica_key_file: [a]\n", "gates:\n  replica_key_file:\n", "gates:\n  replica_key_file: 3\n"} {
		if _, err := decodeGates(bad); err == nil || !strings.Contains(err.Error(), "replica_key_file") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
