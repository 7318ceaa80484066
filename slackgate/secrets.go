package slackgate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"unicode"
)

// The environment variables the secrets come from first.
const (
	EnvBotToken      = "WARDEN_SLACK_BOT_TOKEN"
	EnvSigningSecret = "WARDEN_SLACK_SIGNING_SECRET"
)

// Secret is a credential. It prints, logs and encodes as "[redacted]"; Reveal gives the
// value to the one call that needs it.
type Secret struct{ v string }

const redacted = "[redacted]"

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return s.v }

// Empty reports whether there is no secret.
func (s Secret) Empty() bool { return s.v == "" }

func (s Secret) String() string                { return redacted }
func (s Secret) GoString() string              { return redacted }
func (s Secret) LogValue() slog.Value          { return slog.StringValue(redacted) }
func (s Secret) MarshalText() ([]byte, error)  { return []byte(redacted), nil }
func (s Secret) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, redacted) }

// Secrets are the bot token (for Slack's Web API) and the signing secret (to verify
// that an interaction comes from Slack).
type Secrets struct {
	BotToken      Secret
	SigningSecret Secret
}

// NewSecrets wraps values already at hand (tests, a secrets manager).
func NewSecrets(botToken, signingSecret string) Secrets {
	return Secrets{BotToken: Secret{botToken}, SigningSecret: Secret{signingSecret}}
}

// LoadSecrets reads the bot token and the signing secret: each from its environment
// variable (EnvBotToken, EnvSigningSecret) when set, else from the file the config
// names, which must be readable by its owner only (mode 0600 or 0400). getenv is
// os.Getenv outside tests. Never from flags. Errors name the variable or the file and
// what is wrong, never the value.
func LoadSecrets(c Config, getenv func(string) string) (Secrets, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	tok, err := loadSecret(getenv, EnvBotToken, "slack.bot_token_file", c.BotTokenFile, checkBotToken)
	if err != nil {
		return Secrets{}, err
	}
	sec, err := loadSecret(getenv, EnvSigningSecret, "slack.signing_secret_file", c.SigningSecretFile, checkSigningSecret)
	if err != nil {
		return Secrets{}, err
	}
	return Secrets{BotToken: tok, SigningSecret: sec}, nil
}

func loadSecret(getenv func(string) string, env, field, path string, check func(string) error) (Secret, error) {
	if v := getenv(env); v != "" {
		v = strings.TrimSpace(v)
		if err := check(v); err != nil {
			return Secret{}, fmt.Errorf("%s: %w", env, err)
		}
		return Secret{v}, nil
	}
	if path == "" {
		return Secret{}, fmt.Errorf("no Slack %s: set %s, or name a file with %s", strings.TrimSuffix(strings.TrimPrefix(field, "slack."), "_file"), env, field)
	}
	v, err := readSecretFile(path)
	if err != nil {
		return Secret{}, fmt.Errorf("%s %s: %w", field, path, err)
	}
	if err := check(v); err != nil {
		return Secret{}, fmt.Errorf("%s %s: %w", field, path, err)
	}
	return Secret{v}, nil
}

// maxSecretFile bounds what is read from a secret file.
const maxSecretFile = 4096

func readSecretFile(path string) (string, error) {
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
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", errors.New("cannot be read")
	}
	if len(b) > maxSecretFile {
		return "", fmt.Errorf("longer than %d bytes: not a secret file", maxSecretFile)
	}
	return strings.TrimSpace(string(b)), nil
}

// checkBotToken judges the form of a bot token; its errors never quote it.
func checkBotToken(v string) error {
	switch {
	case v == "":
		return errors.New("empty: want a Slack bot token (xoxb-…)")
	case !strings.HasPrefix(v, "xoxb-"):
		return errors.New("not a Slack bot token: want one starting with xoxb- (the app's OAuth & Permissions page shows it)")
	case len(v) > 255:
		return errors.New("longer than a Slack token can be")
	case strings.IndexFunc(v, notTokenRune) >= 0:
		return errors.New("holds spaces or control characters: a Slack token is one word")
	}
	return nil
}

// checkSigningSecret judges the form of a signing secret; its errors never quote it.
func checkSigningSecret(v string) error {
	switch {
	case v == "":
		return errors.New("empty: want the app's signing secret (Basic Information page)")
	case len(v) < 16:
		return errors.New("too short for a Slack signing secret (32 characters)")
	case len(v) > 255:
		return errors.New("longer than a Slack signing secret can be")
	case strings.IndexFunc(v, notTokenRune) >= 0:
		return errors.New("holds spaces or control characters: a signing secret is one word")
	}
	return nil
}

func notTokenRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r > unicode.MaxASCII
}
