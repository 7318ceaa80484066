package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
)

// warden config check: every problem with its line, exit 2; a good config exits 0 and
// says where each secret comes from, never what it is, in text or in JSON.
func TestConfigCheck(t *testing.T) {
	for _, v := range []string{"WARDEN_SLACK_BOT_TOKEN", "WARDEN_SLACK_SIGNING_SECRET", "WARDEN_EVENTS_TOKEN", "WARDEN_AUDIT_KEY",
		"WARDEN_CERTS_ARCHIVE_KEY", "PGPASSWORD", "PGPASSFILE"} {
		t.Setenv(v, "")
	}
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	const (
		botToken = "xoxb-1111-2222-Sw0rdfishToken"
		signing  = "Sw0rdfish-signing-secret-0123456789"
		dbPass   = "Sw0rdfish-db"
	)
	t.Setenv("WARDEN_SLACK_BOT_TOKEN", botToken)
	sigFile := filepath.Join(dir, "signing")
	if err := os.WriteFile(sigFile, []byte(signing), 0o600); err != nil {
		t.Fatal(err)
	}
	good := write(t, dir, "good.yaml", "db: postgres://warden@db/warden\nslack:\n  channel: C0123456789\n  signing_secret_file: "+sigFile+"\n")
	bad := write(t, dir, "bad.yaml", "fail_on: hihg\ndb: postgres://warden:"+dbPass+"@db/warden\ngates:\n  auto: [lo]\nslack:\n  channel: general\n")

	for _, c := range []struct {
		name     string
		args     []string
		code     int
		contains []string
	}{
		{"clean, text", []string{"config", "check", good}, exitOK, []string{
			good + ": no problems",
			"Slack bot token       ok  from $WARDEN_SLACK_BOT_TOKEN (set)",
			"Slack signing secret  ok  from file " + sigFile + " (slack.signing_secret_file, line 4), mode 0600",
			"database password     ok  none: $PGPASSWORD is not set and there is no passfile",
		}},
		{"problems, text", []string{"config", "check", bad}, exitError, []string{
			bad + `:1: fail_on: unknown severity "hihg"`,
			bad + ":2: db: the PostgreSQL DSN holds a password",
			bad + `:4: gates.auto[0]: unknown risk "lo"`,
			bad + `:6: slack.channel: "general" is not a channel id`,
			bad + ": 4 problems, 0 warnings",
		}},
		{"file alone", []string{"config", "check", "--skip-secrets", good}, exitOK, []string{good + ": no problems"}},
		{"bad format", []string{"config", "check", "--format", "yaml", good}, exitError, []string{`--format: unknown format "yaml" (want text or json)`}},
		{"no file", []string{"config", "check"}, exitError, []string{"name the config file to check: warden config check FILE (or --config FILE)"}},
		// --config, as every other command takes it.
		{"--config", []string{"config", "check", "--skip-secrets", "--config", good}, exitOK, []string{good + ": no problems"}},
		{"--config, problems", []string{"config", "check", "--config", bad}, exitError, []string{bad + ": 4 problems, 0 warnings"}},
		{"both, the same", []string{"config", "check", "--skip-secrets", "--config", good, good}, exitOK, []string{good + ": no problems"}},
		{"both, different", []string{"config", "check", "--config", good, bad}, exitError, []string{"two config files named: " + bad + " (argument) and " + good + " (--config)"}},
		{"two arguments", []string{"config", "check", good, bad}, exitError, []string{"accepts at most 1 arg(s), received 2"}},
		{"missing file", []string{"config", "check", filepath.Join(dir, "nope.yaml")}, exitError, []string{"nope.yaml: cannot read it"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := warden(t, "", c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, stdout, stderr)
			}
			for _, w := range c.contains {
				if !strings.Contains(stdout+stderr, w) {
					t.Errorf("output lacks %q:\n%s%s", w, stdout, stderr)
				}
			}
			for _, s := range []string{botToken, signing, dbPass} {
				if strings.Contains(stdout+stderr, s) {
					t.Errorf("the output shows a secret:\n%s%s", stdout, stderr)
				}
			}
		})
	}

	for _, f := range []string{good, bad} {
		code, stdout, stderr := warden(t, "", "config", "check", "--format", "json", f)
		var r config.Report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("--format json: %v\n%s%s", err, stdout, stderr)
		}
		if (code == exitOK) != r.OK() || r.File != f || len(r.Secrets) != 7 {
			t.Errorf("%s: exit %d, report %+v", f, code, r)
		}
		for _, s := range []string{botToken, signing, dbPass} {
			if strings.Contains(stdout+stderr, s) {
				t.Errorf("the JSON shows a secret:\n%s", stdout)
			}
		}
	}
	code, stdout, _ := warden(t, "", "config", "check", "--format", "json", bad)
	var r config.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || code != exitError || len(r.Problems) != 4 || r.Problems[1].Line != 2 || r.Problems[1].Field != "db" {
		t.Errorf("bad.yaml as JSON: exit %d, %v, %+v", code, err, r.Problems)
	}

	code, stdout, _ = warden(t, "", "config", "check", "--help")
	if code != exitOK || !strings.Contains(stdout, "FILE:LINE: FIELD: what is wrong") || !strings.Contains(stdout, "$WARDEN_EVENTS_TOKEN, else daemon.events_token_file") {
		t.Errorf("--help: exit %d\n%s", code, stdout)
	}
}
