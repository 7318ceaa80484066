package config_test

import (
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
)

// The text names each problem, counts problems and warnings, and says where each
// secret was found through the caller's escaping.
func TestReport_WriteText(t *testing.T) {
	r := config.Report{File: "w.yaml",
		Problems: []config.Problem{{File: "w.yaml", Line: 3, Field: "gates.quorum", Message: "want a number", Level: config.LevelError}},
		Secrets: []config.SecretSource{
			{Name: "Slack bot token", From: config.FromEnv, Env: "WARDEN_SLACK_BOT_TOKEN", OK: true},
			{Name: "events token", From: config.FromFile, File: "/etc/ev\x1b.token", Field: "daemon.events_token_file", Line: 9, Mode: "0644", Note: "others may read it"},
		}}
	var b strings.Builder
	if err := r.WriteText(&b, func(s string) string { return strings.ReplaceAll(s, "\x1b", `\x1b`) }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"w.yaml:3: gates.quorum: want a number\n",
		"w.yaml: 1 problem, 0 warnings\n",
		"Slack bot token  ok       from $WARDEN_SLACK_BOT_TOKEN (set)",
		`events token     PROBLEM  from file /etc/ev\x1b.token (daemon.events_token_file, line 9), mode 0644: others may read it`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}
