package slackgate_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/yamlerr"
	"github.com/warden-sec/warden/slackgate"
)

func TestConfig_validateNamesTheField(t *testing.T) {
	good := slackgate.Config{Channel: "C0123456789", Approvers: []string{"U0AAAAAAA"}, ApproverGroup: "S0CCCCCCC"}
	tests := []struct {
		name      string
		edit      func(c *slackgate.Config)
		wantField string
		wantMsg   string
	}{
		{"valid", func(*slackgate.Config) {}, "", ""},
		{"no channel", func(c *slackgate.Config) { c.Channel = "" }, "slack.channel", "missing"},
		{"a channel name, not an id", func(c *slackgate.Config) { c.Channel = "#security" }, "slack.channel", "not a channel id"},
		{"a user name, not an id", func(c *slackgate.Config) { c.Approvers = []string{"U0AAAAAAA", "bob"} }, "slack.approvers[1]", "not a Slack user id"},
		{"an approver twice", func(c *slackgate.Config) { c.Approvers = []string{"U0AAAAAAA", "U0AAAAAAA"} }, "slack.approvers[1]", "listed twice"},
		{"a bad group", func(c *slackgate.Config) { c.ApproverGroup = "U0AAAAAAA" }, "slack.approver_group", "not a user group id"},
		{"a bad api_url", func(c *slackgate.Config) { c.APIURL = "slack.com/api" }, "slack.api_url", "http(s) URL"},
		{"credentials in api_url", func(c *slackgate.Config) { c.APIURL = "https://u:p@proxy.example/api/" }, "slack.api_url", "credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.edit(&c)
			err := c.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ce *slackgate.ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.wantField || !strings.Contains(ce.Msg, tt.wantMsg) {
				t.Fatalf("err %v, want %s: …%s…", err, tt.wantField, tt.wantMsg)
			}
		})
	}
}

func TestConfig_yaml(t *testing.T) {
	type file struct {
		Slack      slackgate.Config     `yaml:"slack"`
		Identities slackgate.Identities `yaml:"identities"`
	}
	tests := []struct {
		name    string
		yaml    string
		wantErr string
	}{
		{"the issue's example", `
slack:
  channel: C0123456789
  approvers: [U0AAAAAAA, U0BBBBBBB]
  approver_group: S0CCCCCCC
  api_url: ""
identities:
  alice: {slack: U0AAAAAAA}
`, ""},
		{"a typo", "slack:\n  channel: C0123456789\n  aprovers: [U0AAAAAAA]\n", `line 3: slack.aprovers: unknown key (did you mean "approvers"?)`},
		{"a secret in the file", "slack:\n  channel: C0123456789\n  bot_token: xoxb-1\n", "line 3: slack.bot_token: secrets are never written in the config"},
		{"approvers not a list", "slack:\n  channel: C0123456789\n  approvers: U0AAAAAAA\n", "line 3: slack.approvers: want a list"},
		{"a bad user id, with its line", "slack:\n  channel: C0123456789\n  approvers:\n    - U0AAAAAAA\n    - alice\n", "line 5: slack.approvers[1]: \"alice\" is not a Slack user id"},
		{"one Slack user, two people", "slack: {channel: C0123456789}\nidentities:\n  alice: {slack: U0AAAAAAA}\n  bob: {slack: U0AAAAAAA}\n", "line 4: identities.bob.slack: U0AAAAAAA is also identities.alice"},
		{"an identity without its Slack id", "slack: {channel: C0123456789}\nidentities:\n  alice: {slak: U0AAAAAAA}\n", "line 3: identities.alice.slak: unknown key"},
		{"an identity named like a Slack user", "slack: {channel: C0123456789}\nidentities:\n  \"slack:U0AAAAAAA\": {slack: U0AAAAAAA}\n", "names starting with slack: are the identities of unlisted Slack users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f file
			err := yaml.Unmarshal([]byte(tt.yaml), &f)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if f.Slack.Channel != "C0123456789" || len(f.Slack.Approvers) != 2 || f.Slack.ApproverGroup != "S0CCCCCCC" ||
					f.Identities.ForSlack("U0AAAAAAA") != "alice" || f.Identities.ForSlack("U0BBBBBBB") != "slack:U0BBBBBBB" {
					t.Errorf("read %+v", f)
				}
				if got := f.Slack.APIURLOrDefault(); got != slackgate.DefaultAPIURL {
					t.Errorf("api url %q", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestIdentities_slackUser(t *testing.T) {
	ids := slackgate.Identities{"alice": {Slack: "U0AAAAAAA"}}
	for _, c := range []struct {
		identity, want string
		ok             bool
	}{{"alice", "U0AAAAAAA", true}, {"slack:U0BBBBBBB", "U0BBBBBBB", true}, {"bob", "", false}, {"slack:nobody", "", false}} {
		if got, ok := ids.SlackUser(c.identity); got != c.want || ok != c.ok {
			t.Errorf("SlackUser(%q) = %q, %v; want %q, %v", c.identity, got, ok, c.want, c.ok)
		}
	}
}

func TestLoadSecrets(t *testing.T) {
	const tok, sec = "xoxb-123456-abcdef-secretpart", "0123456789abcdef0123456789abcdef"
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tokFile, secFile := write("token", tok+"\n", 0o600), write("secret", sec, 0o400)
	open := write("open-token", tok, 0o644)
	badTok := write("bad-token", "xoxp-"+tok[5:], 0o600)
	spaced := write("spaced-secret", "0123456789abcdef 0123456789abcdef", 0o600)

	tests := []struct {
		name     string
		cfg      slackgate.Config
		env      map[string]string
		wantErr  string
		mustHide []string // never in the error
	}{
		{name: "from the environment", env: map[string]string{slackgate.EnvBotToken: tok, slackgate.EnvSigningSecret: sec}},
		{name: "from files", cfg: slackgate.Config{BotTokenFile: tokFile, SigningSecretFile: secFile}},
		{name: "the environment first", cfg: slackgate.Config{BotTokenFile: open, SigningSecretFile: secFile}, env: map[string]string{slackgate.EnvBotToken: tok}},
		{name: "neither", wantErr: "no Slack bot_token: set WARDEN_SLACK_BOT_TOKEN, or name a file with slack.bot_token_file"},
		{name: "a file others can read", cfg: slackgate.Config{BotTokenFile: open, SigningSecretFile: secFile},
			wantErr: "slack.bot_token_file " + open + ": mode 0644 lets group or others read it: chmod 600", mustHide: []string{tok}},
		{name: "a missing file", cfg: slackgate.Config{BotTokenFile: filepath.Join(dir, "nope"), SigningSecretFile: secFile}, wantErr: "no such file"},
		{name: "not a bot token", cfg: slackgate.Config{BotTokenFile: badTok, SigningSecretFile: secFile},
			wantErr: "not a Slack bot token: want one starting with xoxb-", mustHide: []string{tok[5:]}},
		{name: "a bad token in the environment", env: map[string]string{slackgate.EnvBotToken: "xoxb-has space-" + tok, slackgate.EnvSigningSecret: sec},
			wantErr: "WARDEN_SLACK_BOT_TOKEN: holds spaces", mustHide: []string{tok, "has space"}},
		{name: "a bad secret", cfg: slackgate.Config{BotTokenFile: tokFile, SigningSecretFile: spaced},
			wantErr: "slack.signing_secret_file " + spaced + ": holds spaces", mustHide: []string{"0123456789abcdef"}},
		{name: "a short secret", env: map[string]string{slackgate.EnvBotToken: tok, slackgate.EnvSigningSecret: "abc123"},
			wantErr: "WARDEN_SLACK_SIGNING_SECRET: too short", mustHide: []string{"abc123"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := slackgate.LoadSecrets(tt.cfg, env(tt.env))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				for _, h := range tt.mustHide {
					if strings.Contains(err.Error(), h) {
						t.Errorf("the error quotes the secret: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.BotToken.Reveal() != tok || s.SigningSecret.Reveal() != sec {
				t.Errorf("read %q %q", s.BotToken.Reveal(), s.SigningSecret.Reveal())
			}
		})
	}
}

// TestSecret_neverPrinted: every way a secret is printed, logged or encoded says
// [redacted].
func TestSecret_neverPrinted(t *testing.T) {
	s := slackgate.NewSecrets("xoxb-1-2-verysecret", "0123456789abcdef0123456789abcdef")
	var logged strings.Builder
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("loaded", "secrets", s, "token", s.BotToken)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("loaded", "token", s.BotToken)
	out := fmt.Sprintf("%v %+v %#v %s %q %x", s, s, s, s.BotToken, s.BotToken, s.SigningSecret) + logged.String()
	b, _ := yaml.Marshal(s)
	out += string(b)
	if strings.Contains(out, "verysecret") || strings.Contains(out, "0123456789abcdef") {
		t.Errorf("a secret leaked: %s", out)
	}
	if !strings.Contains(out, "[redacted]") {
		t.Errorf("no redaction mark: %s", out)
	}
}

// The slack: and identities: sections report every problem they have, in one key or in
// several, each with its field and line; one problem is the *ConfigError itself.
func TestConfig_yamlReportsEveryProblem(t *testing.T) {
	type file struct {
		Slack      slackgate.Config     `yaml:"slack"`
		Identities slackgate.Identities `yaml:"identities"`
	}
	type problem struct {
		line       int
		field, msg string
	}
	tests := []struct {
		name string
		yaml string
		want []problem
	}{
		{"three bad approvers", "slack:\n  channel: C0123456789\n  approvers:\n    - alice\n    - U0AAAAAAA\n    - [x]\n    - U0AAAAAAA\n", []problem{
			{6, "slack.approvers[2]", "want a Slack user id"},
			{4, "slack.approvers[0]", `"alice" is not a Slack user id`},
			{7, "slack.approvers[3]", "U0AAAAAAA is listed twice (also approvers[1])"},
		}},
		{"problems in several keys of slack:", "slack:\n  channel: general\n  bot_token: xoxb-1\n  aprovers: [U0AAAAAAA]\n  approver_group: everyone\n  api_url: ftp://slack.example\n", []problem{
			{3, "slack.bot_token", "secrets are never written in the config"},
			{4, "slack.aprovers", `did you mean "approvers"?`},
			{2, "slack.channel", `"general" is not a channel id`},
			{5, "slack.approver_group", `"everyone" is not a user group id`},
			{6, "slack.api_url", "want an http(s) URL"},
		}},
		{"problems of several identities", "slack: {channel: C0123456789}\nidentities:\n  alice: {slack: bob}\n  carol: {slack: U0AAAAAAA, teams: c}\n  dave: {slack: U0AAAAAAA}\n  erin: U0BBBBBBB\n", []problem{
			{4, "identities.carol.teams", "unknown key (known: slack)"},
			{6, "identities.erin", "want a mapping"},
			{3, "identities.alice.slack", `"bob" is not a Slack user id`},
			{5, "identities.dave.slack", "U0AAAAAAA is also identities.carol"},
		}},
		// An unreadable channel is not also missing.
		{"an unread value is not judged", "slack:\n  channel: [C0123456789]\n", []problem{{2, "slack.channel", "want a string"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f file
			err := yaml.Unmarshal([]byte(tt.yaml), &f)
			got := yamlerr.Errors(err)
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if got[i].Line != w.line || got[i].Field != w.field || !strings.Contains(got[i].Msg, w.msg) {
					t.Errorf("problem %d = %v\nwant line %d: %s: …%s…", i, got[i], w.line, w.field, w.msg)
				}
			}
			if _, ok := err.(*slackgate.ConfigError); (len(tt.want) == 1) != ok {
				t.Errorf("error is %T, want a *slackgate.ConfigError for one problem, a join for more", err)
			}
		})
	}
}
