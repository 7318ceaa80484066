package slackgate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// Config is the slack: section of warden's config: where approval requests are posted
// and who may decide them from Slack.
//
//	slack:
//	  channel: C0123456789               # where approval requests are posted
//	  approvers: [U0AAAAAAA, U0BBBBBBB]  # Slack user ids, and/or
//	  approver_group: S0CCCCCCC          # a user group whose members may approve
//	  api_url: ""                        # default Slack's; tests and proxies point elsewhere
//	  bot_token_file: /etc/warden/slack-bot-token          # when not in the environment
//	  signing_secret_file: /etc/warden/slack-signing-secret
//
// A Slack user may decide when listed in Approvers, a member of ApproverGroup, or mapped
// (Identities) to an identity listed in gates.approvers. The bot token and the signing
// secret are never in this section: see LoadSecrets.
type Config struct {
	// Channel is the id of the channel approval requests are posted to.
	Channel string `yaml:"channel"`
	// Approvers are Slack user ids who may decide requests from Slack.
	Approvers []string `yaml:"approvers"`
	// ApproverGroup is a Slack user group id whose members may decide.
	ApproverGroup string `yaml:"approver_group"`
	// APIURL is Slack's Web API base URL (empty: DefaultAPIURL).
	APIURL string `yaml:"api_url"`
	// BotTokenFile and SigningSecretFile name files holding the bot token and the
	// signing secret, read when the environment does not give them. Each must be
	// readable by its owner only.
	BotTokenFile      string `yaml:"bot_token_file"`
	SigningSecretFile string `yaml:"signing_secret_file"`

	// lines locate each field in the YAML it was read from, for errors; nil for a
	// Config built in Go.
	lines map[string]int
}

// DefaultAPIURL is Slack's Web API.
const DefaultAPIURL = "https://slack.com/api/"

// ConfigError is a problem with the slack: or identities: section. Line is its line in
// the YAML it was read from (0 for a config built in Go); Field names the key from the
// section down ("slack.approvers[1]", "identities.alice.slack"), and Section is empty:
// one error type serves both sections.
type ConfigError = yamlerr.Error

var (
	channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,20}$`)
	userID    = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)
	groupID   = regexp.MustCompile(`^S[A-Z0-9]{2,20}$`)
)

// APIURLOrDefault is the Web API base URL, ending in a slash as slack-go wants it.
func (c Config) APIURLOrDefault() string {
	u := strings.TrimSpace(c.APIURL)
	if u == "" {
		return DefaultAPIURL
	}
	if !strings.HasSuffix(u, "/") {
		u += "/"
	}
	return u
}

// IsApprover reports whether the Slack user is listed in slack.approvers.
func (c Config) IsApprover(user string) bool { return slices.Contains(c.Approvers, user) }

// Validate checks the section: a channel id, Slack user ids (each once), a user group
// id, an http(s) API URL. Errors are *ConfigError naming the field, one for each problem
// (errors.Join of them when there are more than one).
func (c Config) Validate() error { return yamlerr.Join(c.validate()) }

// validate is every problem of the section, a field's first problem each.
func (c Config) validate() []*ConfigError {
	var errs []*ConfigError
	add := func(field, format string, args ...any) { errs = append(errs, c.errorf(field, format, args...)) }
	switch {
	case c.Channel == "":
		add("channel", "missing: the id of the channel approval requests are posted to, such as C0123456789")
	case !channelID.MatchString(c.Channel):
		add("channel", "%q is not a channel id (such as C0123456789: in Slack, the channel's details show it)", c.Channel)
	}
	for i, a := range c.Approvers {
		f := fmt.Sprintf("approvers[%d]", i)
		if !userID.MatchString(a) {
			add(f, "%q is not a Slack user id (such as U0AAAAAAA: a member's profile shows it under \"Copy member ID\")", a)
		} else if j := slices.Index(c.Approvers, a); j < i {
			add(f, "%s is listed twice (also approvers[%d])", a, j)
		}
	}
	if c.ApproverGroup != "" && !groupID.MatchString(c.ApproverGroup) {
		add("approver_group", "%q is not a user group id (such as S0CCCCCCC)", c.ApproverGroup)
	}
	if c.APIURL != "" {
		u, err := url.Parse(c.APIURL)
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			add("api_url", "%q: want an http(s) URL such as %s", c.APIURL, DefaultAPIURL)
		case u.User != nil:
			add("api_url", "credentials in the URL are refused: the bot token comes from WARDEN_SLACK_BOT_TOKEN or slack.bot_token_file")
		}
	}
	for _, f := range []struct{ name, path string }{{"bot_token_file", c.BotTokenFile}, {"signing_secret_file", c.SigningSecretFile}} {
		if f.path != "" && strings.TrimSpace(f.path) != f.path {
			add(f.name, "%q: the path has leading or trailing spaces", f.path)
		}
	}
	return errs
}

func (c Config) errorf(field, format string, args ...any) *ConfigError {
	return &ConfigError{Line: c.lines[field], Field: "slack." + field, Msg: fmt.Sprintf(format, args...)}
}

var configKeys = []string{"channel", "approvers", "approver_group", "api_url", "bot_token_file", "signing_secret_file"}

// UnmarshalYAML reads the slack: section and validates it; errors are *ConfigError with
// the line of the offending key, every problem of the section (errors.Join of them when
// there are more than one: those read in the order of the file, then those validating
// finds). Unknown keys are errors (a typo must not leave a setting out), and so is a
// secret written in the section itself.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	out := Config{lines: map[string]int{}}
	if n.Kind != yaml.MappingNode {
		return &ConfigError{Line: n.Line, Field: "slack", Msg: "want a mapping with keys " + strings.Join(configKeys, ", ")}
	}
	var errs []*ConfigError
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "slack." + k.Value
		if l, ok := seen[k.Value]; ok {
			errs = append(errs, &ConfigError{Line: k.Line, Field: field, Msg: fmt.Sprintf("given twice (also line %d)", l)})
			continue
		}
		seen[k.Value] = k.Line
		out.lines[k.Value] = k.Line
		scalar := func(to *string) {
			if v.Kind != yaml.ScalarNode || (v.ShortTag() != "!!str" && v.ShortTag() != "!!null") {
				errs = append(errs, &ConfigError{Line: v.Line, Field: field, Msg: "want a string"})
				return
			}
			*to = v.Value
		}
		switch k.Value {
		case "channel":
			scalar(&out.Channel)
		case "approver_group":
			scalar(&out.ApproverGroup)
		case "api_url":
			scalar(&out.APIURL)
		case "bot_token_file":
			scalar(&out.BotTokenFile)
		case "signing_secret_file":
			scalar(&out.SigningSecretFile)
		case "approvers":
			switch {
			case v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null":
			case v.Kind != yaml.SequenceNode:
				errs = append(errs, &ConfigError{Line: v.Line, Field: field, Msg: "want a list of Slack user ids, such as [U0AAAAAAA]"})
			default:
				for j, it := range v.Content {
					f := fmt.Sprintf("approvers[%d]", j)
					out.lines[f] = it.Line
					if it.Kind != yaml.ScalarNode || it.ShortTag() == "!!null" {
						errs = append(errs, &ConfigError{Line: it.Line, Field: "slack." + f, Msg: "want a Slack user id"})
						// Unread, so that the others keep their index: validating
						// skips it, as its problem is reported already.
						out.Approvers = append(out.Approvers, "")
						continue
					}
					out.Approvers = append(out.Approvers, it.Value)
				}
			}
		case "bot_token", "signing_secret", "token":
			errs = append(errs, &ConfigError{Line: k.Line, Field: field, Msg: "secrets are never written in the config: set WARDEN_SLACK_BOT_TOKEN and WARDEN_SLACK_SIGNING_SECRET, or name files with bot_token_file and signing_secret_file"})
		default:
			msg := fmt.Sprintf("unknown key (known: %s)", strings.Join(configKeys, ", "))
			if s := suggest.Closest(k.Value, configKeys); s != "" {
				msg = fmt.Sprintf("unknown key (did you mean %q?)", s)
			}
			errs = append(errs, &ConfigError{Line: k.Line, Field: field, Msg: msg})
		}
	}
	if err := yamlerr.Join(yamlerr.Merge(errs, out.validate())); err != nil {
		return err
	}
	*c = out
	return nil
}

// Identities is the top-level identities: section: the one name a person has on every
// channel, with their Slack user id.
//
//	identities:
//	  alice: {slack: U0AAAAAAA}
//
// A Slack user listed here decides as that name, so that alice, who requested a fix from
// the CLI as alice, cannot approve it from Slack either, and an approval she gave on one
// channel counts once. A Slack user not listed decides as "slack:<USERID>".
type Identities map[string]Identity

// Identity is one person's accounts on the channels.
type Identity struct {
	// Slack is their Slack user id.
	Slack string `yaml:"slack"`

	line int
}

// SlackPrefix starts the identity of a Slack user not listed in identities.
const SlackPrefix = "slack:"

// ForSlack is the identity a Slack user decides as: their name in identities, else
// "slack:<USERID>".
func (ids Identities) ForSlack(user string) string {
	for _, name := range ids.names() {
		if ids[name].Slack == user {
			return name
		}
	}
	return SlackPrefix + user
}

// SlackUser is the Slack user id of an identity, if it has one: the one listed in
// identities, or the id in "slack:<USERID>".
func (ids Identities) SlackUser(identity string) (string, bool) {
	if id, ok := ids[identity]; ok && id.Slack != "" {
		return id.Slack, true
	}
	if u, ok := strings.CutPrefix(identity, SlackPrefix); ok && userID.MatchString(u) {
		return u, true
	}
	return "", false
}

func (ids Identities) names() []string {
	out := make([]string, 0, len(ids))
	for n := range ids {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Validate checks the section: names that are plain identities (not "slack:…", no
// spaces), Slack user ids, and no Slack user linked to two names. Errors are
// *ConfigError naming the field ("identities.alice.slack"), one for each problem
// (errors.Join of them when there are more than one).
func (ids Identities) Validate() error { return yamlerr.Join(ids.validate()) }

// validate is every problem of the section, a name's first problem each.
func (ids Identities) validate() []*ConfigError {
	var errs []*ConfigError
	owner := map[string]string{}
	for _, name := range ids.names() {
		id := ids[name]
		var e *ConfigError
		switch other, dup := owner[id.Slack]; {
		case strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n"):
			e = &ConfigError{Line: id.line, Field: fmt.Sprintf("identities.%q", name), Msg: "an identity name is one word, such as alice"}
		case strings.HasPrefix(name, SlackPrefix):
			e = &ConfigError{Line: id.line, Field: "identities." + name, Msg: "names starting with slack: are the identities of unlisted Slack users: pick a plain name"}
		case id.Slack == "":
			e = &ConfigError{Line: id.line, Field: "identities." + name + ".slack", Msg: "missing: the person's Slack user id, such as U0AAAAAAA"}
		case !userID.MatchString(id.Slack):
			e = &ConfigError{Line: id.line, Field: "identities." + name + ".slack", Msg: fmt.Sprintf("%q is not a Slack user id (such as U0AAAAAAA)", id.Slack)}
		case dup:
			e = &ConfigError{Line: id.line, Field: "identities." + name + ".slack", Msg: fmt.Sprintf("%s is also identities.%s: one Slack user is one person", id.Slack, other)}
		default:
			owner[id.Slack] = name
		}
		if e != nil {
			errs = append(errs, e)
		}
	}
	return errs
}

// UnmarshalYAML reads the identities: section and validates it, reporting every problem
// as Config's does; unknown keys are errors.
func (ids *Identities) UnmarshalYAML(n *yaml.Node) error {
	out := Identities{}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		*ids = out
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &ConfigError{Line: n.Line, Field: "identities", Msg: "want a mapping of names to accounts, such as alice: {slack: U0AAAAAAA}"}
	}
	var errs []*ConfigError
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := "identities." + k.Value
		if _, dup := out[k.Value]; dup {
			errs = append(errs, &ConfigError{Line: k.Line, Field: field, Msg: "given twice"})
			continue
		}
		id := Identity{line: k.Line}
		if v.Kind != yaml.MappingNode {
			errs = append(errs, &ConfigError{Line: v.Line, Field: field, Msg: "want a mapping such as {slack: U0AAAAAAA}"})
			out[k.Value] = id // so that a second one is given twice
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			kk, vv := v.Content[j], v.Content[j+1]
			if kk.Value != "slack" {
				errs = append(errs, &ConfigError{Line: kk.Line, Field: field + "." + kk.Value, Msg: "unknown key (known: slack)"})
				continue
			}
			if vv.Kind != yaml.ScalarNode || vv.ShortTag() != "!!str" {
				errs = append(errs, &ConfigError{Line: vv.Line, Field: field + ".slack", Msg: "want a Slack user id, such as U0AAAAAAA"})
				continue
			}
			id.Slack = vv.Value
		}
		out[k.Value] = id
	}
	if err := yamlerr.Join(yamlerr.Merge(errs, out.validate())); err != nil {
		return err
	}
	*ids = out
	return nil
}
