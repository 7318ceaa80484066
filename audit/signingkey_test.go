package audit_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/audit"
)

// The key text in the environment wins over the file; without it, a missing file is no
// key unless the caller creates one, and the file made is the one read next time.
func TestSigningKey_envThenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.key")
	none := func(string) string { return "" }
	if s, v, err := audit.SigningKey(none, path, false); s != nil || v != nil || err != nil {
		t.Fatalf("no file, no create: %v %v %v, want no key and no error", s, v, err)
	}
	s, v, err := audit.SigningKey(none, path, true)
	if err != nil || s == nil || v == nil {
		t.Fatalf("create: %v", err)
	}
	if _, again, err := audit.SigningKey(none, path, false); err != nil || again == nil || again.KeyHash() != v.KeyHash() {
		t.Fatalf("the file made is not the key read next: %v", err)
	}
	if _, _, err := audit.SigningKey(func(string) string { return "not a key" }, path, false); err == nil || !strings.Contains(err.Error(), "$"+audit.KeyEnv) {
		t.Errorf("a bad key in $%s: %v, want an error naming it", audit.KeyEnv, err)
	}
}
