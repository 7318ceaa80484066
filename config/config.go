// Package config reads warden's YAML configuration: policy settings, extra policy
// directories, waivers, the database, and (for collection) targets.
package config

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/dashboard"
	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
	awsfix "github.com/warden-sec/warden/remediators/aws"
	"github.com/warden-sec/warden/remediators/certs"
	"github.com/warden-sec/warden/slackgate"
)

// Config is the content of a warden config file. Flags override it.
type Config struct {
	// Settings are policy thresholds, seen by policies as data.warden.config
	// (e.g. access_key_max_age_days: 60, known_accounts: ["444455556666"]).
	Settings map[string]any `yaml:"settings"`
	// Policies are extra policy directories, besides the built-in pack.
	Policies []string `yaml:"policies"`
	// Waivers is the waiver file.
	Waivers string `yaml:"waivers"`
	// DB is the scan history database: a file path (SQLite).
	DB string `yaml:"db"`
	// FailOn is the lowest severity that makes warden scan exit 1.
	FailOn string `yaml:"fail_on"`
	// Targets are what warden collect and warden scan read when no snapshot is given.
	Targets Targets `yaml:"targets"`
	// Gates are the approval rules of warden apply: which risks run unattended, who
	// approves the others and how many must, when requests expire, what never runs.
	// Validated as it is read (gates.Config.Validate); absent, the gates' defaults hold.
	Gates gates.Config `yaml:"gates"`
	// Serve configures warden serve: where it listens.
	Serve Serve `yaml:"serve"`
	// Rotation configures access-key rotation (aws.iam.rotate_access_key): the secret a
	// new key is handed over in, the grace and deletion periods.
	Rotation awsfix.RotationConfig `yaml:"rotation"`
	// Certs configures certificate renewal (certs.renew) through ACME: the directory,
	// the challenge, the archive key, where each endpoint's files go. Absent, renewal
	// is planned but not applied.
	Certs *certs.Config `yaml:"certs"`
	// Slack is the Slack approval channel: where requests are posted, who may decide
	// from Slack. Absent, warden serve offers no Slack endpoint.
	Slack *slackgate.Config `yaml:"slack"`
	// Identities link one person's names across channels (alice: {slack: U0AAAAAAA}),
	// so that the requester of an action never approves it from another channel.
	Identities slackgate.Identities `yaml:"identities"`
	// Daemon configures what warden serve reconciles on its own: schedules per kind of
	// target, how often everything is evaluated again, job timeouts, the events token.
	Daemon Daemon `yaml:"daemon"`
	// Dashboard configures the web pages warden serve serves: on or off, whether and how
	// visitors authenticate (tokens, an authenticating proxy's headers). Validated as
	// it is read; absent, the pages are on and authentication is off on loopback only.
	Dashboard dashboard.Config `yaml:"dashboard"`
	// Reports are the compliance reports warden serve writes on a schedule (frameworks,
	// formats, a directory or an S3 bucket, how many to keep, how often). Validated as it
	// is read; absent, none are written.
	Reports *Reports `yaml:"reports"`
	// Export is where warden serve sends its findings on a schedule: AWS Security Hub,
	// Google Security Command Center. Validated as it is read; absent, nowhere.
	Export *Export `yaml:"export"`

	File string `yaml:"-"`
	// Version names the file's content: "sha256:" and the hex digest of its bytes. The
	// audit log records it when it changes. Empty when no file was read.
	Version string `yaml:"-"`
	// lines are the lines of the settings' keys, by name, for errors about them.
	lines map[string]int
}

// Serve is the serve: section.
type Serve struct {
	// Listen is the address warden serve listens on (default DefaultServeListen).
	Listen string `yaml:"listen"`
	// AllowRemote permits a Listen address other than loopback: the Slack endpoint must
	// then be reachable from Slack (behind a TLS proxy), an explicit choice.
	AllowRemote bool `yaml:"allow_remote"`
}

// DefaultServeListen is where warden serve listens unless told otherwise: loopback only.
const DefaultServeListen = "127.0.0.1:8080"

// Targets name the live endpoints and accounts to collect.
type Targets struct {
	// TLS endpoints as host:port, optionally host:port@sni.
	TLS []string `yaml:"tls"`
	// AWS, when present (even empty: "aws: {}"), collects the account of the current
	// credentials, or the whole organisation.
	AWS *AWSTargets `yaml:"aws"`
	// GCP, when present, collects the listed projects.
	GCP *GCPTargets `yaml:"gcp"`
}

// AWSTargets say which AWS accounts and regions to read, and how fast.
type AWSTargets struct {
	// Org walks every active account of the organisation through OrgRole.
	Org     bool   `yaml:"org"`
	OrgRole string `yaml:"org_role"`
	// Regions to read (default every enabled region).
	Regions []string `yaml:"regions"`
	// Endpoint overrides AWS_ENDPOINT_URL (a simulator, a VPC endpoint proxy).
	Endpoint string `yaml:"endpoint"`
	// RateLimits are calls per second per service and account ("iam": 10); 0 is no
	// limit, a service left out has the default.
	RateLimits map[string]float64 `yaml:"rate_limits"`
	// Concurrency is the number of accounts read in parallel.
	Concurrency int `yaml:"concurrency"`
	// Usage, when enabled, reads what each user, group and role used of its grants
	// (IAM Access Advisor) for the least-privilege policies (docs/least-privilege.md).
	Usage *AWSUsage `yaml:"usage"`
}

// AWSUsage is targets.aws.usage: Access Advisor data, three IAM calls or more a principal
// per refresh, so off unless enabled.
type AWSUsage struct {
	Enabled bool `yaml:"enabled"`
	// Granularity is "action" (the default: per action where AWS tracks actions) or
	// "service".
	Granularity string `yaml:"granularity"`
	// Refresh is how long a principal's data is reused by a running warden serve before
	// it is asked again (default 4h: AWS updates it within hours).
	Refresh time.Duration `yaml:"refresh"`
	// Source is access_advisor (the default: IAM's last-accessed data, every service
	// granted, three calls a principal) or access_analyzer (an IAM Access Analyzer
	// unused-access analyzer's findings: only what is unused for longer than its age, a
	// few calls an account and one a principal with findings; groups are not analyzed).
	Source string `yaml:"source"`
	// AnalyzerRegion is the region of the unused-access analyzer (default: the AWS
	// configuration's region).
	AnalyzerRegion string `yaml:"analyzer_region"`
}

// GCPTargets say which GCP projects to read.
type GCPTargets struct {
	Projects []string `yaml:"projects"`
	// Endpoint overrides Google's endpoints (the simulator); credentials are then not sent.
	Endpoint string `yaml:"endpoint"`
	// RateLimit is calls per second per service and project.
	RateLimit float64 `yaml:"rate_limit"`
	// Recommendations reads the IAM recommender's active role recommendations into each
	// project's IAM policy, for the least-privilege policies (docs/least-privilege.md);
	// two more calls a project, and the Recommender API enabled, so off unless set.
	Recommendations bool `yaml:"recommendations"`
	// Activity reads the Policy Analyzer's last authentications of service accounts and
	// keys (last_authenticated, last_authenticated_since); two more calls a project, and
	// the Policy Analyzer API enabled, so off unless set.
	Activity bool `yaml:"activity"`
}

// Error is a problem in a config file, located by file and line.
type Error struct {
	File string
	Line int
	// Field is the key the problem is about ("gates.quorum.critical"), when it is known
	// apart from the message; empty when Msg names it itself or names none.
	Field string
	Msg   string
	// Err is the error the problem is an instance of (ErrNotLoopback), for errors.Is;
	// nil for most.
	Err error
}

// Unwrap is Err.
func (e *Error) Unwrap() error { return e.Err }

func (e *Error) Error() string {
	msg := e.Msg
	if e.Field != "" {
		msg = e.Field + ": " + msg
	}
	if e.Line > 0 {
		return fmt.Sprintf("read config %s: line %d: %s", e.File, e.Line, msg)
	}
	return fmt.Sprintf("read config %s: %s", e.File, msg)
}

// Load reads a config file.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(b, path)
}

// Parse reads a config from YAML; unknown fields are errors, so that a typo is not
// silently ignored, and so are a second YAML document, a fail_on that is not a severity
// and a secret written in the file (a password in db: or in an endpoint's URL). Settings
// are checked against the policies later, by the engine (see SettingError for their
// lines). The error is the first problem found; Check reports them all.
func Parse(data []byte, file string) (*Config, error) {
	c, errs, _ := parse(data, file, parseOptions{})
	if len(errs) > 0 {
		return nil, errs[0]
	}
	return c, nil
}

// parseOptions leave checks out of parse, for Check when a section they depend on was
// refused (its problem is reported already; judging without it would add false ones).
type parseOptions struct {
	skipQuorum bool
	// keepGoing judges the values decoded despite the decoder's type errors (a wrong
	// type, an unknown key: yaml.v3 goes on after them), so that Check reports a bad
	// value next to a misspelt key of the same section.
	keepGoing bool
}

// parse reads a config. decoded is false when the YAML could not be decoded (a syntax
// error, a type, an unknown key, a section that refused itself): errs then holds what
// the decoder said and c is nil, unless opts.keepGoing went on after type errors (then
// errs also holds the problems of what was decoded). Otherwise errs holds every problem
// of the decoded config, in the order Parse has always reported the first of them.
func parse(data []byte, file string, opts parseOptions) (c *Config, errs []*Error, decoded bool) {
	sum := sha256.Sum256(data)
	c = &Config{File: file, Version: "sha256:" + hex.EncodeToString(sum[:])}
	if len(bytes.TrimSpace(data)) == 0 {
		c.Daemon = c.Daemon.WithDefaults()
		return c, nil, true
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if _, ok := err.(*yaml.TypeError); !ok || !opts.keepGoing {
			return nil, decodeErrors(file, err), false
		}
		errs = decodeErrors(file, err)
	} else if err := secondDocument(dec, file); err != nil {
		return nil, []*Error{err}, false
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, []*Error{yamlError(file, err)}, false
	}
	c.lines = map[string]int{}
	if len(root.Content) == 1 && root.Content[0].Kind == yaml.MappingNode {
		top := root.Content[0].Content
		for i := 0; i+1 < len(top); i += 2 {
			switch k, v := top[i], top[i+1]; k.Value {
			case "fail_on", "db":
				c.lines["@"+k.Value] = k.Line
			case "rotation", "serve", "daemon", "targets", "policies", "dashboard":
				c.lines["@"+k.Value] = k.Line
				walkLines(v, "@"+k.Value, c.lines)
			case "settings":
				if v.Kind != yaml.MappingNode {
					continue
				}
				for j := 0; j+1 < len(v.Content); j += 2 {
					c.lines[v.Content[j].Value] = v.Content[j].Line
				}
			}
		}
	}
	more := append(c.validate(opts), scalarProblems(&root, file)...)
	if len(errs) > 0 {
		return c, append(errs, more...), false
	}
	return c, more, true
}

// secondDocument refuses a document after the one dec has read: it would be ignored
// whole, settings and all. (An empty one, as a trailing "---" makes, holds nothing to
// lose.)
func secondDocument(dec *yaml.Decoder, file string) *Error {
	for {
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return yamlError(file, err)
		}
		if len(extra.Content) > 0 && extra.Content[0].Tag != "!!null" {
			return &Error{File: file, Line: extra.Line, Msg: "a second YAML document: a config file holds one (remove the \"---\")"}
		}
	}
}

// validate checks what the sections' decoders cannot judge alone, collecting every
// problem, and makes the settings JSON-shaped.
func (c *Config) validate(opts parseOptions) []*Error {
	var errs []*Error
	add := func(line int, field, msg string) {
		errs = append(errs, &Error{File: c.File, Line: line, Field: field, Msg: msg})
	}
	for _, k := range slices.Sorted(maps.Keys(c.Settings)) {
		if strings.TrimSpace(k) == "" {
			add(c.lines[k], "settings", "empty setting name")
		}
	}
	if c.FailOn != "" {
		if _, err := findings.ParseSeverity(c.FailOn); err != nil {
			msg := err.Error()
			if sg := suggest.Closest(strings.ToLower(c.FailOn), severities); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			add(c.lines["@fail_on"], "fail_on", msg)
		}
	}
	if !opts.skipQuorum {
		if err := c.checkApprovers(); err != nil {
			errs = append(errs, err)
		}
	}
	for key, msg := range rotationProblems(c.Rotation) {
		add(cmp.Or(c.lines["@rotation."+key], c.lines["@rotation"]), "", msg)
	}
	if c.Serve.Listen != "" {
		if _, _, err := net.SplitHostPort(c.Serve.Listen); err != nil {
			add(c.lines["@serve"], "", fmt.Sprintf("serve.listen %q: want host:port: %v", c.Serve.Listen, err))
		}
	}
	for _, err := range c.Daemon.check() {
		line := c.lines["@daemon"]
		if l := c.lines["@daemon."+err.Key]; l > 0 {
			line = l
		}
		add(line, "", err.Msg)
	}
	errs = append(errs, c.checkTargets()...)
	if msg := inlineDBSecret(c.DB); msg != "" {
		add(c.lines["@db"], "db", msg)
	}
	c.Settings = JSONShape(c.Settings).(map[string]any)
	return errs
}

// decodeErrors turns what the YAML decoder returned into located errors: every one a
// section reported (the reports: section reports all of its own), or each of the
// decoder's type errors (it goes on after a wrong type or an unknown key).
func decodeErrors(file string, err error) []*Error {
	var out []*Error
	for _, e := range flatten(err) {
		// The gates:, certs:, slack:, identities:, dashboard: and reports: sections
		// validate themselves as they are decoded and know their lines.
		if se, ok := errors.AsType[*yamlerr.Error](e); ok {
			out = append(out, sectionError(file, se))
			continue
		}
		var te *yaml.TypeError
		if errors.As(e, &te) && len(te.Errors) > 1 {
			for _, msg := range te.Errors {
				out = append(out, yamlError(file, &yaml.TypeError{Errors: []string{msg}}))
			}
			continue
		}
		out = append(out, yamlError(file, e))
	}
	return out
}

// flatten lists the errors an errors.Join made, in order; any other error is itself.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}

// checkApprovers judges the gates' quorum with every channel's approvers: Slack users
// listed in slack.approvers count unless they are linked to a gates approver already,
// and an approver group makes any quorum reachable (only Slack knows its members).
func (c *Config) checkApprovers() *Error {
	others, group := 0, false
	if c.Slack != nil {
		group = c.Slack.ApproverGroup != ""
		for _, u := range c.Slack.Approvers {
			if !c.Gates.IsApprover(c.Identities.ForSlack(u)) {
				others++
			}
		}
	}
	if err := c.Gates.CheckQuorum(others, group); err != nil {
		if ge, ok := errors.AsType[*gates.ConfigError](err); ok {
			return sectionError(c.File, ge)
		}
		return &Error{File: c.File, Msg: err.Error()}
	}
	return nil
}

// sectionError places a section's error in the file: its field apart from what is
// wrong, so that Error prints it as the section did ("gates.auto[0]: unknown risk …").
func sectionError(file string, se *yamlerr.Error) *Error {
	field := se.Section
	if se.Field != "" {
		if field != "" {
			field += "."
		}
		field += se.Field
	}
	if field == "" {
		return &Error{File: file, Line: se.Line, Msg: se.Detail()}
	}
	return &Error{File: file, Line: se.Line, Field: field, Msg: se.Msg}
}

// walkLines records the line of every key and list item below n, by its path after
// prefix ("@targets.aws.regions[1]").
func walkLines(n *yaml.Node, prefix string, lines map[string]int) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := prefix + "." + n.Content[i].Value
			lines[key] = n.Content[i].Line
			walkLines(n.Content[i+1], key, lines)
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			key := fmt.Sprintf("%s[%d]", prefix, i)
			lines[key] = it.Line
			walkLines(it, key, lines)
		}
	}
}

var severities = []string{"critical", "high", "medium", "low", "info"}

// topKeys are the keys of a config file, in the order the documentation lists them.
var topKeys = []string{"settings", "policies", "waivers", "db", "fail_on", "targets", "gates", "serve", "rotation", "certs", "slack", "identities", "daemon", "dashboard", "reports", "export"}

// SettingError locates a problem with the setting name (a key of Settings) in the
// config file: path is where below the setting ("database_ports[1]"), msg what is wrong.
func (c *Config) SettingError(name, path, msg string) *Error {
	return &Error{File: c.File, Line: c.lines[name], Msg: fmt.Sprintf("settings.%s: %s", path, msg)}
}

// JSONShape makes a value decoded from YAML JSON-shaped: string keys everywhere, as Rego
// and encoding/json expect (YAML allows keys of any type).
func JSONShape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = JSONShape(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = JSONShape(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = JSONShape(e)
		}
		return x
	}
	return v
}

func yamlError(file string, err error) *Error {
	var te *yaml.TypeError
	msgs := []string{err.Error()}
	if errors.As(err, &te) {
		msgs = te.Errors
	}
	msg := strings.TrimPrefix(msgs[0], "yaml: ")
	line := 0
	if _, serr := fmt.Sscanf(msg, "line %d:", &line); serr == nil {
		msg = strings.TrimSpace(msg[strings.Index(msg, ":")+1:])
	}
	msg = strings.Replace(msg, "in type config.Config", "(known fields: "+strings.Join(topKeys, ", ")+")", 1)
	return &Error{File: file, Line: line, Msg: msg}
}

// rotationProblems are the problems of the rotation: section by key, every one of them:
// its Validate stops at the first, so each key is judged alone (and the whole, for a
// problem between keys).
func rotationProblems(r awsfix.RotationConfig) map[string]string {
	out := map[string]string{}
	for key, one := range map[string]awsfix.RotationConfig{"secret_name": {SecretName: r.SecretName}, "region": {Region: r.Region},
		"grace": {Grace: r.Grace}, "delete_after": {DeleteAfter: r.DeleteAfter}, "recheck": {Recheck: r.Recheck}} {
		if err := one.Validate(); err != nil {
			out[key] = err.Error()
		}
	}
	if err := r.Validate(); err != nil && len(out) == 0 {
		out[""] = err.Error()
	}
	return out
}
