package config_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/mod/sumdb/note"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/config"
	"github.com/warden-sec/warden/gates/sign"
)

// secretEnv are the variables the checker reads; every test starts with them unset, so
// that the machine's own environment decides nothing.
var secretEnv = []string{"WARDEN_SLACK_BOT_TOKEN", "WARDEN_SLACK_SIGNING_SECRET", "WARDEN_EVENTS_TOKEN",
	"WARDEN_AUDIT_KEY", "WARDEN_CERTS_ARCHIVE_KEY", "WARDEN_REPLICA_KEY", "PGPASSWORD", "PGPASSFILE"}

// isolate unsets the secrets' variables and points $HOME and $XDG_STATE_HOME (the
// passfile, the audit key's default) at an empty directory.
func isolate(t *testing.T) string {
	t.Helper()
	for _, v := range secretEnv {
		t.Setenv(v, "")
	}
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	return home
}

// everything is the report as a user could see it: each problem's line and the JSON.
func everything(t *testing.T, r config.Report) string {
	t.Helper()
	var b strings.Builder
	for _, p := range r.Problems {
		b.WriteString(p.String() + "\n")
	}
	j, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	fmt.Fprintf(&b, "\n%+v\n%#v", r, r)
	return b.String()
}

type want struct {
	line  int
	field string // the Problem's Field
	msg   string // a part of its Message
}

func checkProblems(t *testing.T, r config.Report, wants []want) {
	t.Helper()
	if len(r.Problems) != len(wants) {
		t.Errorf("%d problems, want %d:\n%s", len(r.Problems), len(wants), everything(t, r))
	}
	for i, w := range wants {
		if i >= len(r.Problems) {
			break
		}
		p := r.Problems[i]
		if p.Line != w.line || p.Field != w.field || !strings.Contains(p.Message, w.msg) || p.Level != config.LevelError {
			t.Errorf("problem %d = %s (%s)\nwant line %d, field %s, message containing %q", i, p, p.Level, w.line, w.field, w.msg)
		}
	}
}

// One check names every problem of the file, each with its line and field, in line
// order, though they are in nine sections and the decoder stops at the first.
func TestCheck_reportsEveryProblemWithItsLine(t *testing.T) {
	isolate(t)
	r := config.Check(context.Background(), "testdata/many-problems.yaml", config.CheckOptions{})
	checkProblems(t, r, []want{
		{3, "settings.access_key_max_age_days", `is a string ("ninety"), want an integer like its default 90`},
		{4, "settings.acces_key_unused_days", `unknown setting (did you mean "access_key_unused_days"?)`},
		{5, "fail_on", `unknown severity "hihg"`},
		{6, "db", "the PostgreSQL DSN holds a password: secrets are never written in the config"},
		{9, "targets.aws.regoins", "field regoins not found"},
		{10, "targets.aws.concurrency", "-2: want a number of accounts"},
		{11, "targets.tls[0]", "port must be a number from 1 to 65535"},
		{13, "gates.auto[0]", `unknown risk "lo"`},
		{15, "slack.channel", `"general" is not a channel id`},
		{17, "daemon.full_every", "cannot unmarshal"},
		{20, "reports.frameworks[0]", `unknown framework "cis-aws-30" (did you mean "cis-aws-3.0"?)`},
		{21, "reports.formats[0]", `unknown report format "pdf"`},
		{23, "dashbord", `unknown key (did you mean "dashboard"?)`},
		{25, "", `serve.listen "nowhere": want host:port`},
	})
	if r.OK() {
		t.Error("OK() with problems")
	}
	if out := everything(t, r); strings.Contains(out, "hunter2-not-a-real-one") {
		t.Errorf("the report shows db:'s password:\n%s", out)
	}
	// Load still stops at the first problem, with the message it always had.
	if _, err := config.Load("testdata/many-problems.yaml"); err == nil || !strings.HasPrefix(err.Error(), "read config testdata/many-problems.yaml: line ") {
		t.Errorf("Load: %v", err)
	}
}

// After a syntax error nothing can be read: that one problem is the report.
func TestCheck_syntaxErrorStops(t *testing.T) {
	isolate(t)
	r := config.Check(context.Background(), "testdata/syntax-error.yaml", config.CheckOptions{})
	if len(r.Problems) != 1 || r.Problems[0].Line != 5 || !strings.Contains(r.Problems[0].Message, "found unexpected end of stream") || r.Secrets != nil {
		t.Errorf("report = %s", everything(t, r))
	}
	missing := config.Check(context.Background(), "testdata/nope.yaml", config.CheckOptions{})
	if len(missing.Problems) != 1 || !strings.Contains(missing.Problems[0].String(), "testdata/nope.yaml: cannot read it") {
		t.Errorf("a missing file: %s", everything(t, missing))
	}
}

// Problems that the decoder would meet one at a time in other shapes: each section
// alone, duplicates, several problems in one section, a second document.
func TestCheck_shapes(t *testing.T) {
	isolate(t)
	for _, c := range []struct {
		name, yaml string
		want       []want
	}{
		{"clean minimal", "db: warden.db\n", nil},
		{"empty file", "", nil},
		{"top-level key twice", "fail_on: high\nwaivers: a.yaml\nfail_on: low\n", []want{{3, "fail_on", "given twice (also line 1)"}}},
		{"reports: every problem of the section", "reports:\n  frameworks: [soc2, soc2]\n  formats: [HTML]\n  keep: 0\n  destinaton: /srv\n",
			[]want{{2, "reports.frameworks[1]", `"soc2" is listed twice`}, {3, "reports.formats[0]", "write format names in lower case"},
				{4, "reports.keep", "keep at least 1"}, {5, "reports.destinaton", `did you mean "destination"?`}}},
		{"daemon: every problem of the section", "daemon:\n  schedules:\n    awss: \"@hourly\"\n    gcp: \"* *\"\n  job_timeout: 20m\n  rescue_after: 10m\n  trace_sample_ratio: 3\n",
			[]want{{3, "", "daemon.schedules.awss: not a kind of target"}, {4, "", "daemon.schedules.gcp: schedule"},
				{6, "", "daemon.rescue_after (10m0s) must exceed daemon.job_timeout (20m0s)"}, {7, "", "daemon.trace_sample_ratio 3"}}},
		{"export: every problem of the section", "export:\n  every: 10s\n  securityhub:\n    region: Ireland\n    acount: \"1234\"\n  scc:\n    organization: acme\n    all: yes\n",
			[]want{{2, "export.every", "want at least 1m0s"}, {4, "export.securityhub.region", `"Ireland" is not an AWS region`},
				{5, "export.securityhub.acount", `did you mean "account"?`},
				{7, "export.scc.organization", "want the numeric id"}, {8, "export.scc.all", "want true or false"}}},
		{"export: required keys", "export:\n  securityhub: {region: eu-west-1}\n  scc: {all: true}\n",
			[]want{{2, "export.securityhub.account", "required"}, {3, "export.scc.organization", "required"}}},
		{"export: nowhere", "export: {every: 1h}\n", []want{{1, "export", "name where to export: securityhub, scc or both"}}},
		{"export: clean", "export:\n  securityhub: {region: eu-west-1, account: \"111111111111\"}\n  scc: {organization: \"123456789012\", all: true}\n", nil},
		{"a second document", "fail_on: hihg\n---\nsettings: {}\n", []want{{1, "fail_on", "unknown severity"}, {2, "", "a second YAML document"}}},
		{"wrong types in two struct sections", "serve:\n  allow_remote: maybe\ntargets:\n  gcp:\n    rate_limit: fast\n",
			[]want{{2, "serve.allow_remote", "cannot unmarshal"}, {5, "targets.gcp.rate_limit", "cannot unmarshal"}}},
		{"quorum not judged without slack:", "gates:\n  approvers: [bob]\n  quorum: {high: 1}\n  unchecked_names: true\nslack:\n  channel: nope\n  approvers: [U0AAAAAAA]\n",
			[]want{{6, "slack.channel", "not a channel id"}}},
		{"quorum judged with slack:", "gates:\n  approvers: [bob]\n  quorum:\n    critical: 3\n  unchecked_names: true\nslack:\n  channel: C0123456789\n  approvers: [U0AAAAAAA]\n",
			[]want{{4, "gates.quorum.critical", "need 3 distinct approvals"}}},
		{"endpoint not a URL", "targets:\n  gcp:\n    projects: [p]\n    endpoint: 127.0.0.1:4566\n", []want{{4, "targets.gcp.endpoint", "want an http:// or https:// URL"}}},
		{"bad region", "targets:\n  aws:\n    regions: [eu-west-1, Ireland]\n", []want{{3, "targets.aws.regions[1]", `"Ireland" is not an AWS region`}}},
		{"usage", "targets:\n  aws:\n    usage:\n      enabled: true\n      granularity: actions\n      refresh: -1h\n",
			[]want{{5, "targets.aws.usage.granularity", `"actions": want action`}, {6, "targets.aws.usage.refresh", "want a positive duration"}}},
		{"usage source", "targets:\n  aws:\n    usage:\n      enabled: true\n      source: analyzer\n      analyzer_region: eu-west-1\n",
			[]want{{5, "targets.aws.usage.source", `"analyzer": want access_advisor`}, {6, "targets.aws.usage.analyzer_region", "only read with source: access_analyzer"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "warden.yaml")
			if err := os.WriteFile(path, []byte(c.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			r := config.Check(context.Background(), path, config.CheckOptions{SkipSecrets: true, SkipSettings: true})
			checkProblems(t, r, c.want)
			// Check and Load agree on whether the file is good.
			if _, err := config.Load(path); (err == nil) != (len(c.want) == 0) {
				t.Errorf("Load: %v, Check: %d problems", err, len(r.Problems))
			}
		})
	}
}

// The policies: directories are looked for as warden scan looks for them (Load does
// not), and the settings they read are known settings.
func TestCheck_policyDirectories(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	ours := filepath.Join(dir, "ours")
	if err := os.MkdirAll(ours, 0o755); err != nil {
		t.Fatal(err)
	}
	rego := `# METADATA
# title: Team tag missing
# description: Every bucket names its team.
# custom:
#   id: ACME-TAG-001
#   severity: low
#   resource_types: [aws.iam.user]
#   remediation: {action: manual, risk: none}
package acme.tags

team_tag := t if {
	t := data.warden.config.acme_team_tag
} else := "team"

deny contains msg if {
	not input.resource.attributes.tags[team_tag]
	msg := sprintf("%s has no %s tag", [input.resource.name, team_tag])
}
`
	if err := os.WriteFile(filepath.Join(ours, "tags.rego"), []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "warden.yaml")
	text := "policies: [" + ours + ", " + filepath.Join(dir, "missing") + "]\nsettings:\n  acme_team_tag: owner\n  acme_team_tga: x\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r := config.Check(context.Background(), path, config.CheckOptions{SkipSecrets: true})
	checkProblems(t, r, []want{
		{1, "policies[1]", "no such directory"},
		{4, "settings.acme_team_tga", `unknown setting (did you mean "acme_team_tag"?)`},
	})
}

// A secret written in the config is refused, by Load and by Check, naming the line and
// never the value.
func TestCheck_refusesInlineSecrets(t *testing.T) {
	isolate(t)
	r := config.Check(context.Background(), "testdata/inline-secrets.yaml", config.CheckOptions{})
	checkProblems(t, r, []want{
		{1, "db", "the PostgreSQL DSN holds a password"},
		{4, "targets.aws.endpoint", "no user or password in the URL: secrets are never written in the config"},
		{7, "slack.bot_token", "secrets are never written in the config: set WARDEN_SLACK_BOT_TOKEN"},
	})
	if out := everything(t, r); strings.Contains(out, "Tr0ub4dor") {
		t.Errorf("the report shows an inline secret:\n%s", out)
	}
	for _, in := range []string{
		"db: postgres://warden:Tr0ub4dor@db/warden\n",
		"db: postgres://warden@db/warden?sslpassword=Tr0ub4dor\n",
		"db: \"host=db password='Tr0ub4dor x'\"\n",
		"targets:\n  gcp:\n    endpoint: http://u:Tr0ub4dor@127.0.0.1:1\n",
	} {
		_, err := config.Parse([]byte(in), "warden.yaml")
		if err == nil || !strings.Contains(err.Error(), "read config warden.yaml: line ") || !strings.Contains(err.Error(), "secrets are never written in the config") {
			t.Errorf("Parse(%q) = %v, want the inline secret refused with its line", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "Tr0ub4dor") {
			t.Errorf("Parse(%q): the error shows the secret: %v", in, err)
		}
	}
}

// secretsCase is one way of supplying the secrets, and what the check must say of it.
type secretsCase struct {
	name string
	// setup writes files and sets variables in dir; it returns the config's text.
	setup   func(t *testing.T, dir string) string
	sources map[string]string // secret name → "from" (env, file, none)
	ok      map[string]bool   // secret name → whether warden would accept it (default true)
	// problems are parts of the problems expected, in order, with their levels.
	problems []string
}

const (
	botToken      = "xoxb-1111-2222-Tr0ub4dorBotToken"
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5-Tr0ub4dor"
	eventsToken   = "Tr0ub4dor-events-0123456789abcdef0123456789abcdef"
)

func writeSecret(t *testing.T, dir, name, value string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(value+"\n"), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // whatever the umask
		t.Fatal(err)
	}
	return p
}

func TestCheck_secrets(t *testing.T) {
	skey, _, err := note.GenerateKey(rand.Reader, audit.KeyName)
	if err != nil {
		t.Fatal(err)
	}
	archiveKey := "VHIwdWI0ZG9yVHIwdWI0ZG9yVHIwdWI0ZG9yVHIwdWI=" // base64 of 32 bytes
	replicaKey, replicaPub := replicaKeyPair(t)
	listed := "gates:\n  signers: {\"@replicas\": [\"" + replicaPub + "\"]}\n"
	slackCfg := "slack:\n  channel: C0123456789\n"
	certsCfg := func(extra string) string {
		return "certs:\n  directory: https://acme.example/directory\n  challenge:\n    http01: {listen: 127.0.0.1:5002}\n" + extra
	}
	for _, c := range []secretsCase{
		{name: "from the environment",
			setup: func(t *testing.T, dir string) string {
				t.Setenv("WARDEN_SLACK_BOT_TOKEN", botToken)
				t.Setenv("WARDEN_SLACK_SIGNING_SECRET", signingSecret)
				t.Setenv("WARDEN_EVENTS_TOKEN", eventsToken)
				t.Setenv("WARDEN_AUDIT_KEY", skey)
				t.Setenv("WARDEN_CERTS_ARCHIVE_KEY", archiveKey)
				t.Setenv("PGPASSWORD", "Tr0ub4dor-pg")
				t.Setenv("WARDEN_REPLICA_KEY", replicaKey)
				return slackCfg + certsCfg("") + "db: postgres://warden@db/warden\n" + listed
			},
			sources: map[string]string{"Slack bot token": "env", "Slack signing secret": "env", "events token": "env",
				"audit checkpoint key": "env", "certs archive key": "env", "database password": "env", "replica signing key": "env"}},
		{name: "from files",
			setup: func(t *testing.T, dir string) string {
				tok := writeSecret(t, dir, "bot", botToken, 0o600)
				sig := writeSecret(t, dir, "sig", signingSecret, 0o400)
				ev := writeSecret(t, dir, "events", eventsToken, 0o600)
				ak := writeSecret(t, dir, "archive", archiveKey, 0o600)
				writeSecret(t, dir, "audit.key", skey, 0o600)
				pass := writeSecret(t, dir, "pgpass", "db:5432:warden:warden:Tr0ub4dor-pg", 0o600)
				rk := writeSecret(t, dir, "replica.key", replicaKey, 0o600)
				return slackCfg + "  bot_token_file: " + tok + "\n  signing_secret_file: " + sig + "\n" +
					certsCfg("  archive_key_file: "+ak+"\n") + "daemon:\n  events_token_file: " + ev + "\n" +
					"db: host=db user=warden dbname=warden passfile=" + pass + "\n" + listed + "  replica_key_file: " + rk + "\n"
			},
			sources: map[string]string{"Slack bot token": "file", "Slack signing secret": "file", "events token": "file",
				"audit checkpoint key": "file", "certs archive key": "file", "database password": "file", "replica signing key": "file"}},
		{name: "files others may read",
			setup: func(t *testing.T, dir string) string {
				tok := writeSecret(t, dir, "bot", botToken, 0o644)
				t.Setenv("WARDEN_SLACK_SIGNING_SECRET", signingSecret)
				ak := writeSecret(t, dir, "archive", archiveKey, 0o640)
				writeSecret(t, dir, "audit.key", skey, 0o644)
				t.Setenv("PGPASSFILE", writeSecret(t, dir, "pgpass", "*:*:*:*:Tr0ub4dor-pg", 0o604))
				rk := writeSecret(t, dir, "replica.key", replicaKey, 0o644)
				return "db: postgres://warden@db/warden\n" + slackCfg + "  bot_token_file: " + tok + "\n" + certsCfg("  archive_key_file: "+ak+"\n") +
					"gates:\n  replica_key_file: " + rk + "\n"
			},
			sources: map[string]string{"Slack bot token": "file", "Slack signing secret": "env", "audit checkpoint key": "file",
				"certs archive key": "file", "database password": "file", "replica signing key": "file"},
			ok: map[string]bool{"Slack bot token": false, "audit checkpoint key": false, "replica signing key": false},
			problems: []string{
				"warning: db: passfile ", // line 1
				"Slack bot token: slack.bot_token_file ",
				"warning: certs.archive_key_file: archive key file ",
				"gates.replica_key_file: the replica's signing key ", // line 11
				"audit checkpoint key: audit key ",
			}},
		{name: "missing and malformed",
			setup: func(t *testing.T, dir string) string {
				t.Setenv("WARDEN_EVENTS_TOKEN", "Tr0ub4dor-short")
				t.Setenv("WARDEN_AUDIT_KEY", "Tr0ub4dor-not-a-key")
				t.Setenv("WARDEN_REPLICA_KEY", "Tr0ub4dor-not-a-key")
				return slackCfg + certsCfg("")
			},
			sources: map[string]string{"Slack bot token": "none", "Slack signing secret": "none", "events token": "env",
				"audit checkpoint key": "env", "certs archive key": "none", "database password": "none", "replica signing key": "env"},
			ok: map[string]bool{"Slack bot token": false, "Slack signing secret": false, "events token": false, "audit checkpoint key": false, "certs archive key": false,
				"replica signing key": false},
			problems: []string{
				"Slack bot token: no Slack bot_token: set WARDEN_SLACK_BOT_TOKEN, or name a file with slack.bot_token_file",
				"Slack signing secret: no Slack signing_secret",
				"certs.archive_key_file: no archive key",
				"audit checkpoint key: $WARDEN_AUDIT_KEY: not a note signer key",
				"events token: WARDEN_EVENTS_TOKEN: shorter than 32 characters",
				"replica signing key: read the signing key $WARDEN_REPLICA_KEY",
			}},
		{name: "a replica key not listed",
			setup: func(t *testing.T, dir string) string {
				t.Setenv("WARDEN_REPLICA_KEY", replicaKey)
				return "gates:\n  auto: [low]\n"
			},
			sources:  map[string]string{"replica signing key": "env"},
			problems: []string{"warning: gates.signers: the replica signing key's public half is not listed under gates.signers.@replicas"}},
		{name: "unchecked names",
			setup: func(t *testing.T, dir string) string {
				t.Setenv("WARDEN_REPLICA_KEY", "Tr0ub4dor-not-a-key")
				return "gates:\n  unchecked_names: true\n"
			},
			sources: map[string]string{"replica signing key": "none"}},
		{name: "nothing configured",
			setup: func(t *testing.T, dir string) string { return "fail_on: high\n" },
			sources: map[string]string{"Slack bot token": "none", "Slack signing secret": "none", "events token": "none",
				"audit checkpoint key": "none", "certs archive key": "none", "database password": "none", "replica signing key": "none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			isolate(t)
			dir := t.TempDir()
			t.Setenv("XDG_STATE_HOME", dir) // the audit key's default: dir/warden/audit.key
			text := c.setup(t, dir)
			if _, err := os.Stat(filepath.Join(dir, "audit.key")); err == nil {
				os.MkdirAll(filepath.Join(dir, "warden"), 0o700)
				if err := os.Rename(filepath.Join(dir, "audit.key"), filepath.Join(dir, "warden", "audit.key")); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(dir, "warden.yaml")
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			r := config.Check(context.Background(), path, config.CheckOptions{SkipSettings: true})
			out := everything(t, r)
			// The audit key's private part: all of it after its fourth "+", where its
			// base64 may hold more (a piece of it between two could be as short as "AR",
			// which "WARDEN_…" holds).
			for _, v := range []string{"Tr0ub4dor", "BEGIN", strings.SplitN(skey, "+", 5)[4]} {
				if strings.Contains(out, v) {
					t.Fatalf("the report shows a secret (%q):\n%s", v, out)
				}
			}
			if len(r.Secrets) != 7 {
				t.Fatalf("%d secrets reported, want 7:\n%s", len(r.Secrets), out)
			}
			for _, s := range r.Secrets {
				if want, ok := c.sources[s.Name]; ok && s.From != want {
					t.Errorf("%s: from %q, want %q (%+v)", s.Name, s.From, want, s)
				}
				wantOK := true
				if v, ok := c.ok[s.Name]; ok {
					wantOK = v
				}
				if s.OK != wantOK {
					t.Errorf("%s: ok %v, want %v (%+v)", s.Name, s.OK, wantOK, s)
				}
				if s.From == config.FromFile && s.File == "" || s.From == config.FromFile && s.Mode == "" {
					t.Errorf("%s: from a file, but which, or its mode, is not said: %+v", s.Name, s)
				}
			}
			var got []string
			for _, p := range r.Problems {
				got = append(got, strings.TrimPrefix(p.String(), path+":"))
			}
			if len(got) != len(c.problems) {
				t.Fatalf("problems:\n%s\nwant %d", strings.Join(got, "\n"), len(c.problems))
			}
			for i, w := range c.problems {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %d = %s\nwant it to contain %q", i, got[i], w)
				}
			}
			// Warnings alone leave the config good.
			wantOK := !slices.ContainsFunc(c.problems, func(p string) bool { return !strings.HasPrefix(p, "warning: ") })
			if r.OK() != wantOK {
				t.Errorf("OK() = %v, want %v", r.OK(), wantOK)
			}
		})
	}
}

// The configs the docs and tests show are accepted, secrets and all, when the secrets
// are where they belong.
func TestCheck_cleanConfig(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/clean.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer(
		"SLACK_BOT_TOKEN_FILE", writeSecret(t, dir, "bot", botToken, 0o600),
		"SLACK_SIGNING_SECRET_FILE", writeSecret(t, dir, "sig", signingSecret, 0o600),
		"EVENTS_TOKEN_FILE", writeSecret(t, dir, "events", eventsToken, 0o600),
	).Replace(string(b))
	path := filepath.Join(dir, "warden.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	r := config.Check(context.Background(), path, config.CheckOptions{})
	if len(r.Problems) != 0 || !r.OK() {
		t.Errorf("problems in a clean config:\n%s", everything(t, r))
	}
	if _, err := config.Load(path); err != nil {
		t.Errorf("Load: %v", err)
	}
}

// Check never panics, and agrees with Parse: what Parse accepts has no error, what it
// refuses has at least one, and every line is one of the file's.
func FuzzCheck(f *testing.F) {
	for _, p := range []string{"testdata/many-problems.yaml", "testdata/syntax-error.yaml", "testdata/clean.yaml", "testdata/inline-secrets.yaml"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("fail_on: high\n---\nsettings: {a: 1}\n"))
	f.Add([]byte("a: &x {b: 1}\nc: *x\n"))
	f.Add([]byte("{gates: {auto: [lo]}, slack: {channel: x}}\n"))
	f.Add([]byte("export:\n  every: 10s\n  securityhub: {region: x, acount: 1}\n  scc: yes\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := config.CheckData(context.Background(), data, "fuzz.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
		_, err := config.Parse(data, "fuzz.yaml")
		if err == nil && !r.OK() {
			t.Errorf("Parse accepts it, Check reports:\n%s", everything(t, r))
		}
		if err != nil && r.OK() {
			t.Errorf("Parse refuses it (%v), Check reports nothing", err)
		}
		// YAML breaks lines at "\r\n", "\r", "\n", NEL, LS and PS.
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		lines := 1
		for _, br := range []string{"\r", "\n", "\u0085", "\u2028", "\u2029"} {
			lines += strings.Count(text, br)
		}
		for _, p := range r.Problems {
			if p.Line < 0 || p.Line > lines {
				t.Errorf("problem on line %d of %d: %s", p.Line, lines, p)
			}
		}
	})
}

// The sections that validate themselves (gates:, certs:, slack:, identities:) report
// every problem of every key, several in one key too, each with its line; Load still
// refuses the file with the first of them.
func TestCheck_everyProblemOfSelfValidatingSections(t *testing.T) {
	isolate(t)
	const file = `gates:
  auto: [lo, hi]
  approvers: [bob, bob]
  quorum:
    critical: 0
    high: many
certs:
  directory: http://acme.example/directory
  email: nobody
  challenge:
    http01: {listen: nowhere}
slack:
  channel: general
  approvers: [U0AAAAAAA, nobody, U0AAAAAAA]
  bot_token: xoxb-not-a-real-one
identities:
  alice: {slack: bob}
  carol: {slack: U0AAAAAAA, teams: x}
`
	path := filepath.Join(t.TempDir(), "warden.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	r := config.Check(context.Background(), path, config.CheckOptions{SkipSecrets: true, SkipSettings: true})
	checkProblems(t, r, []want{
		{2, "gates.auto[0]", `unknown risk "lo"`},
		{2, "gates.auto[1]", `unknown risk "hi"`},
		{3, "gates.approvers", "gates.signers lists no keys"},
		{3, "gates.approvers[1]", `"bob" is listed twice (also approvers[0])`},
		{5, "gates.quorum.critical", "quorum 0: a request needs at least 1 approval"},
		{6, "gates.quorum.high", `"many": want a whole number of approvals`},
		{8, "certs.directory", "plain http is allowed only on loopback"},
		{9, "certs.email", `"nobody" is not an email address`},
		{11, "certs.challenge.http01.listen", `"nowhere" is not host:port`},
		{13, "slack.channel", `"general" is not a channel id`},
		{14, "slack.approvers[1]", `"nobody" is not a Slack user id`},
		{14, "slack.approvers[2]", "U0AAAAAAA is listed twice (also approvers[0])"},
		{15, "slack.bot_token", "secrets are never written in the config"},
		{17, "identities.alice.slack", `"bob" is not a Slack user id`},
		{18, "identities.carol.teams", "unknown key (known: slack)"},
	})
	if out := everything(t, r); strings.Contains(out, "xoxb-not-a-real-one") {
		t.Errorf("the report shows the bot token:\n%s", out)
	}
	// Load refuses it with the first problem, as it always did.
	want := "read config " + path + `: line 2: gates.auto[0]: unknown risk "lo" (want none, low, medium, high or critical) (did you mean "low"?)`
	if _, err := config.Load(path); err == nil || err.Error() != want {
		t.Errorf("Load: %v\nwant %s", err, want)
	}
}

// replicaKeyPair is a new replica signing key: the private key as ssh-keygen writes it,
// and its authorized_keys line.
func replicaKeyPair(t *testing.T) (string, string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "replica")
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(block)), sign.AuthorizedKey(s.PublicKey())
}
