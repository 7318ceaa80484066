package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/store"
)

// KeyEnv is the environment variable that holds the checkpoint signing key itself
// (PRIVATE+KEY+…), for hosts that keep secrets in the environment; it wins over any key
// file.
const KeyEnv = "WARDEN_AUDIT_KEY"

// KeyName is the name in the signer keys LoadOrCreateKey creates; a signature line of a
// checkpoint reads "— warden.audit …".
const KeyName = "warden.audit"

// DefaultKeyPath is where the checkpoint signing key lives when none is configured:
// next to the default history, $XDG_STATE_HOME/warden/audit.key (or
// ~/.local/state/warden/audit.key).
func DefaultKeyPath() (string, error) {
	db, err := store.DefaultPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(db), "audit.key"), nil
}

// LoadOrCreateKey reads the note signer key (PRIVATE+KEY+name+hash+key, as
// note.GenerateKey writes it) in the file at path; when there is no file, it creates
// one with a new ed25519 key, mode 0600, in a directory made with mode 0700. A key file
// that others may read is refused, as ssh refuses one. Errors name the file, never the
// key.
func LoadOrCreateKey(path string) (note.Signer, note.Verifier, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read audit key %s: %w", path, err)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("read audit key %s: %w", path, err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, fmt.Errorf("audit key %s is readable by others (mode %04o): chmod 600 it", path, perm)
	}
	s, v, err := ParseKey(string(b))
	if err != nil {
		return nil, nil, fmt.Errorf("audit key %s: %w", path, err)
	}
	return s, v, nil
}

// createKey writes a new key at path. O_EXCL: should another process create the file
// at the same moment, its key is the one read, so that both sign with one key.
func createKey(path string) (note.Signer, note.Verifier, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, nil, fmt.Errorf("create audit key %s: %w", path, err)
	}
	skey, _, err := note.GenerateKey(rand.Reader, KeyName)
	if err != nil {
		return nil, nil, fmt.Errorf("create audit key %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return LoadOrCreateKey(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("create audit key %s: %w", path, err)
	}
	_, werr := f.WriteString(skey + "\n")
	if serr := f.Sync(); werr == nil {
		werr = serr
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, nil, fmt.Errorf("create audit key %s: %w", path, werr)
	}
	return ParseKey(skey)
}

// ParseKey reads a note signer key (PRIVATE+KEY+name+hash+key, surrounding white space
// ignored), as held by a key file or $WARDEN_AUDIT_KEY, and returns its signer and the
// matching verifier. Errors never quote the key.
func ParseKey(text string) (note.Signer, note.Verifier, error) {
	skey := strings.TrimSpace(text)
	signer, err := note.NewSigner(skey)
	if err != nil {
		// note's errors quote nothing of the key, but say so here to be sure of it.
		return nil, nil, errors.New("not a note signer key (want PRIVATE+KEY+name+hash+key, as 'warden audit key' expects)")
	}
	vkey, err := verifierKey(skey)
	if err != nil {
		return nil, nil, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("derive the verifier key: %w", err)
	}
	if v.KeyHash() != signer.KeyHash() {
		return nil, nil, errors.New("derive the verifier key: key hash mismatch")
	}
	return signer, verifier{Verifier: v, vkey: vkey}, nil
}

// verifierKey derives the verifier key (name+hash+key) of an ed25519 signer key, which
// note.NewSigner has already checked.
func verifierKey(skey string) (string, error) {
	parts := strings.SplitN(skey, "+", 5)
	if len(parts) != 5 {
		return "", errors.New("not a note signer key")
	}
	raw, err := base64.StdEncoding.DecodeString(parts[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize || raw[0] != 1 {
		return "", errors.New("not an ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(parts[2], pub)
}

// verifier is a note.Verifier that also knows its text form.
type verifier struct {
	note.Verifier
	vkey string
}

// String returns the verifier key text (name+hash+key).
func (v verifier) String() string { return v.vkey }

// VerifierKey returns the text form (name+hash+key, what note.NewVerifier reads) of a
// verifier returned by ParseKey or LoadOrCreateKey: what 'warden audit key' prints for
// third parties. It holds no secret.
func VerifierKey(v note.Verifier) (string, error) {
	if kv, ok := v.(verifier); ok {
		return kv.vkey, nil
	}
	return "", fmt.Errorf("verifier key of %s: not made by audit.ParseKey", v.Name())
}
