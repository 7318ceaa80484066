package slackgate

import (
	"errors"
	"strings"
	"unicode"

	"github.com/warden-sec/warden/internal/secret"
)

// The environment variables the secrets come from first.
const (
	EnvBotToken      = "WARDEN_SLACK_BOT_TOKEN"
	EnvSigningSecret = "WARDEN_SLACK_SIGNING_SECRET"
)

// Secret is a credential: it prints, logs and encodes as "[redacted]".
type Secret = secret.Value

// Secrets are the bot token (for Slack's Web API) and the signing secret (to verify
// that an interaction comes from Slack).
type Secrets struct {
	BotToken      Secret
	SigningSecret Secret
}

// NewSecrets wraps values already at hand (tests, a secrets manager).
func NewSecrets(botToken, signingSecret string) Secrets {
	return Secrets{BotToken: secret.New(botToken), SigningSecret: secret.New(signingSecret)}
}

// LoadSecrets reads the bot token and the signing secret: each from its environment
// variable (EnvBotToken, EnvSigningSecret) when set, else from the file the config
// names, which must be readable by its owner only (mode 0600 or 0400). getenv is
// os.Getenv outside tests. Never from flags. Errors name the variable or the file and
// what is wrong, never the value.
func LoadSecrets(c Config, getenv func(string) string) (Secrets, error) {
	tokSrc, secSrc := SecretSources(c)
	tok, err := secret.Load(getenv, tokSrc)
	if err != nil {
		return Secrets{}, err
	}
	sec, err := secret.Load(getenv, secSrc)
	if err != nil {
		return Secrets{}, err
	}
	return Secrets{BotToken: tok, SigningSecret: sec}, nil
}

// SecretSources are where LoadSecrets takes the bot token and the signing secret from,
// with the checks of their form: for a config check that says where each would come
// from without showing it.
func SecretSources(c Config) (botToken, signingSecret secret.Source) {
	src := func(env, field, path string, check func(string) error) secret.Source {
		what := "Slack " + strings.TrimSuffix(strings.TrimPrefix(field, "slack."), "_file")
		return secret.Source{Env: env, Field: field, Path: path, What: what, Check: check}
	}
	return src(EnvBotToken, "slack.bot_token_file", c.BotTokenFile, checkBotToken),
		src(EnvSigningSecret, "slack.signing_secret_file", c.SigningSecretFile, checkSigningSecret)
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
