package audit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// SigningKey returns the checkpoint signing key as every command finds it: the key text
// in $WARDEN_AUDIT_KEY (read through getenv), else the key file at path (DefaultKeyPath
// when empty), created on first use when create is true. With create false, a missing
// file is no key: nil, nil, nil (warden serve signs no checkpoint then).
func SigningKey(getenv func(string) string, path string, create bool) (note.Signer, note.Verifier, error) {
	if text := getenv(KeyEnv); strings.TrimSpace(text) != "" {
		s, v, err := ParseKey(text)
		if err != nil {
			return nil, nil, fmt.Errorf("$%s: %w", KeyEnv, err)
		}
		return s, v, nil
	}
	if path == "" {
		var err error
		if path, err = DefaultKeyPath(); err != nil {
			return nil, nil, err
		}
	}
	if !create {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
	}
	return LoadOrCreateKey(path)
}
