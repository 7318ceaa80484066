package audit_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
)

func TestLoadOrCreateKey_createsPrivateFileOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "warden", "audit.key")
	s1, v1, err := audit.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode %04o, want 0600", perm)
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("key directory mode %04o, want 0700", dir.Mode().Perm())
	}
	s2, v2, err := audit.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if s1.KeyHash() != s2.KeyHash() || v1.KeyHash() != v2.KeyHash() || s1.Name() != audit.KeyName {
		t.Errorf("second load gave another key (%s %08x, then %s %08x)", s1.Name(), s1.KeyHash(), s2.Name(), s2.KeyHash())
	}
	// What one signs, the other verifies.
	msg, err := note.Sign(&note.Note{Text: "hello\n"}, s1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(msg, note.VerifierList(v2)); err != nil {
		t.Errorf("signature of the loaded key does not verify: %v", err)
	}
	vkey, err := audit.VerifierKey(v1)
	if err != nil {
		t.Fatal(err)
	}
	skey, _ := os.ReadFile(path)
	// A verifier key is name+hash+base64; the base64 may itself hold '+'.
	parts := strings.SplitN(vkey, "+", 3)
	if len(parts) != 3 || strings.Contains(vkey, "PRIVATE") || strings.Contains(string(skey), parts[2]) {
		t.Errorf("verifier key %q shows the private key", vkey)
	}
}

func TestLoadOrCreateKey_refusesKeyOthersCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.key")
	if _, _, err := audit.LoadOrCreateKey(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := audit.LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: %v, want refused", err)
	}
}

func TestParseKey_errorsNeverShowTheKey(t *testing.T) {
	skey, _, err := note.GenerateKey(nil, audit.KeyName)
	if err != nil {
		t.Fatal(err)
	}
	// PRIVATE+KEY+name+hash+key: the key's base64 may itself hold '+'.
	parts := strings.SplitN(skey, "+", 5)
	secret := parts[4]
	for name, text := range map[string]string{
		"truncated":  skey[:len(skey)-4],
		"wrong hash": strings.Replace(skey, "+"+parts[3]+"+", "+00000000+", 1),
		"verifier":   "warden.audit+00000000+" + secret,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.key")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := audit.LoadOrCreateKey(path)
			if err == nil {
				t.Fatal("bad key accepted")
			}
			if strings.Contains(err.Error(), secret[:12]) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q: want the file named and the key not shown", err)
			}
		})
	}
}
