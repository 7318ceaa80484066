// Package secret holds credentials warden reads from the environment or from files: a
// Value that prints, logs and encodes as "[redacted]", and Load, which takes it from an
// environment variable or else from a file only its owner can read. Errors name the
// variable or the file and what is wrong, never the value.
package secret

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
)

// Value is a credential. It prints, logs and encodes as "[redacted]"; Reveal gives the
// value to the one call that needs it.
type Value struct{ v string }

const redacted = "[redacted]"

// New wraps a value already at hand (tests, a secrets manager).
func New(v string) Value { return Value{v} }

// Reveal returns the secret's value.
func (s Value) Reveal() string { return s.v }

// Empty reports whether there is no secret.
func (s Value) Empty() bool { return s.v == "" }

func (s Value) String() string                { return redacted }
func (s Value) GoString() string              { return redacted }
func (s Value) LogValue() slog.Value          { return slog.StringValue(redacted) }
func (s Value) MarshalText() ([]byte, error)  { return []byte(redacted), nil }
func (s Value) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, redacted) }

// Source says where a secret may come from: the environment variable Env first (getenv
// is os.Getenv outside tests), else the file Path, named in errors as Field (the config
// key, "slack.bot_token_file"). What names the secret in the error when neither is set.
type Source struct {
	Env, Field, Path, What string
	// Check judges the value's form; its errors must never quote it.
	Check func(string) error
}

// Load reads the secret from its source.
func Load(getenv func(string) string, s Source) (Value, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	check := s.Check
	if check == nil {
		check = func(v string) error {
			if v == "" {
				return errors.New("empty")
			}
			return nil
		}
	}
	if v := getenv(s.Env); v != "" {
		v = strings.TrimSpace(v)
		if err := check(v); err != nil {
			return Value{}, fmt.Errorf("%s: %w", s.Env, err)
		}
		return Value{v}, nil
	}
	if s.Path == "" {
		return Value{}, fmt.Errorf("no %s: set %s, or name a file with %s", s.What, s.Env, s.Field)
	}
	v, err := ReadFile(s.Path)
	if err != nil {
		return Value{}, fmt.Errorf("%s %s: %w", s.Field, s.Path, err)
	}
	if err := check(v); err != nil {
		return Value{}, fmt.Errorf("%s %s: %w", s.Field, s.Path, err)
	}
	return Value{v}, nil
}

// MaxFile bounds what is read from a secret file.
const MaxFile = 4096

// ReadFile reads a secret file: a regular file of at most MaxFile bytes that neither its
// group nor others may read, its content trimmed of surrounding space.
func ReadFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", errors.New("no such file")
		}
		if errors.Is(err, fs.ErrPermission) {
			return "", errors.New("permission denied")
		}
		return "", errors.New("cannot be opened")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", errors.New("cannot be read")
	}
	if !fi.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("mode %04o lets group or others read it: chmod 600 %s", perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFile+1))
	if err != nil {
		return "", errors.New("cannot be read")
	}
	if len(b) > MaxFile {
		return "", fmt.Errorf("longer than %d bytes: not a secret file", MaxFile)
	}
	return strings.TrimSpace(string(b)), nil
}
