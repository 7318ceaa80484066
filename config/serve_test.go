package config_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/warden-sec/warden/config"
)

// One validation for config check and serve's start: what serve refuses, config check
// reports, with its line and field; what config check passes, serve starts on.
func TestCheckServe_oneValidationForCheckAndServe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		yaml   string
		listen string // serve's --listen
		wants  []want
	}{
		{"loopback", "serve:\n  listen: 127.0.0.1:9000\ndashboard:\n  auth: off\n", "", nil},
		{"the default, loopback", "db: /tmp/w.db\n", "", nil},
		{"remote without allow_remote", "serve:\n  listen: 0.0.0.0:8080\n", "",
			[]want{{2, "serve.listen", "0.0.0.0:8080 is not a loopback address: warden serve refuses it unless serve.allow_remote is true"}}},
		{"every interface without allow_remote", "serve:\n  listen: \":8080\"\n", "", []want{{2, "serve.listen", "not a loopback address"}}},
		{"remote, allowed", "serve:\n  listen: 10.0.0.5:8080\n  allow_remote: true\n", "", nil},
		{"auth off with allow_remote", "serve:\n  listen: 0.0.0.0:8080\n  allow_remote: true\ndashboard:\n  auth: off\n", "",
			[]want{{5, "dashboard.auth", "off is allowed only when warden serve listens on loopback"}}},
		{"both at once", "serve:\n  listen: 0.0.0.0:8080\ndashboard:\n  auth: off\n", "",
			[]want{{2, "serve.listen", "not a loopback address"}, {4, "dashboard.auth", "listens on 0.0.0.0:8080"}}},
		{"auth off, the dashboard off", "serve:\n  listen: 0.0.0.0:8080\n  allow_remote: true\ndashboard:\n  enabled: false\n  auth: off\n", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolate(t)
			r := config.CheckData(context.Background(), []byte(tc.yaml), "w.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
			checkProblems(t, r, tc.wants)
			c, err := config.Parse([]byte(tc.yaml), "w.yaml")
			if err != nil {
				t.Fatalf("Parse: %v (serve's checks are serve's: every other command takes this config)", err)
			}
			err = c.CheckServe(tc.listen)
			if (err != nil) != (len(tc.wants) > 0) {
				t.Fatalf("serve's start: %v; config check: %d problems", err, len(r.Problems))
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w.msg) {
					t.Errorf("serve's refusal %q lacks %q", err, w.msg)
				}
			}
			if len(tc.wants) > 0 && tc.wants[0].field == "serve.listen" && !errors.Is(err, config.ErrNotLoopback) {
				t.Errorf("serve's refusal is not ErrNotLoopback: %v", err)
			}
		})
	}
	// serve's --listen is judged as serve.listen would be.
	c, err := config.Parse([]byte("serve:\n  listen: 0.0.0.0:8080\n"), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckServe("127.0.0.1:0"); err != nil {
		t.Errorf("--listen on loopback over a remote serve.listen: %v", err)
	}
	if err := (&config.Config{}).CheckServe("0.0.0.0:0"); !errors.Is(err, config.ErrNotLoopback) || !strings.Contains(err.Error(), "--listen") {
		t.Errorf("--listen beyond loopback: %v", err)
	}
}

// A boolean is true or false: the words YAML 1.1 read as booleans are strings in YAML
// 1.2, and a config that says "yes" is refused with the word to write, by config check
// and by every command that reads the config.
func TestParse_booleansAreYAMLBooleans(t *testing.T) {
	for _, tc := range []struct {
		yaml  string
		wants []want
	}{
		{"serve:\n  allow_remote: yes\n", []want{{2, "serve.allow_remote", `"yes" is a string, not a boolean: write true`}}},
		{"serve:\n  allow_remote: \"yes\"\n", []want{{2, "serve.allow_remote", `"yes" is a string, not a boolean: write true`}}},
		{"daemon:\n  dry_run: Off\n", []want{{2, "daemon.dry_run", `"Off" is a string, not a boolean: write false`}}},
		{"targets:\n  aws:\n    org: on\n", []want{{3, "targets.aws.org", `"on" is a string, not a boolean: write true`}}},
		{"serve:\n  allow_remote: true\n  listen: 127.0.0.1:1\ndaemon:\n  dry_run: false\ntargets:\n  aws:\n    org: true\n", nil},
		// Every one at once, with the other sections' problems.
		{"serve:\n  allow_remote: yes\ndaemon:\n  dry_run: no\nfail_on: hihg\n", []want{
			{2, "serve.allow_remote", `write true`}, {4, "daemon.dry_run", `write false`}, {5, "fail_on", "unknown severity"}}},
	} {
		isolate(t)
		r := config.CheckData(context.Background(), []byte(tc.yaml), "w.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
		checkProblems(t, r, tc.wants)
		_, err := config.Parse([]byte(tc.yaml), "w.yaml")
		if (err != nil) != (len(tc.wants) > 0) {
			t.Errorf("Parse(%q): %v", tc.yaml, err)
		}
	}
}

// No value holds more than 4 KiB: a 50 MB db: is a mistake, refused with its line, and
// so is any other long string; 4 KiB itself is taken.
func TestParse_boundsValues(t *testing.T) {
	isolate(t)
	long := strings.Repeat("a", config.MaxValue+1)
	for _, tc := range []struct {
		yaml  string
		wants []want
	}{
		{"fail_on: high\ndb: /tmp/" + long + "\n", []want{{2, "db", "4102 bytes: a value holds at most 4096 (4 KiB)"}}},
		{"db: /tmp/" + strings.Repeat("a", config.MaxValue-5) + "\n", nil},
		{"targets:\n  tls:\n    - example.com:443\n    - " + long + ":443\n", []want{{4, "targets.tls[1]", "a value holds at most 4096"}}},
		{"db: " + strings.Repeat("b", 50<<20) + "\n", []want{{1, "db", "52428800 bytes"}}},
	} {
		r := config.CheckData(context.Background(), []byte(tc.yaml), "w.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
		checkProblems(t, r, tc.wants)
		if _, err := config.Parse([]byte(tc.yaml), "w.yaml"); (err != nil) != (len(tc.wants) > 0) {
			t.Errorf("Parse: %v", err)
		}
	}
}

// The rotation: section names all of its problems, not the first.
func TestCheck_rotationEveryProblem(t *testing.T) {
	isolate(t)
	yaml := "rotation:\n  secret_name: \"warden/{acount}\"\n  grace: -1h\n  delete_after: -2h\n  recheck: -1s\n"
	r := config.CheckData(context.Background(), []byte(yaml), "w.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
	checkProblems(t, r, []want{{2, "", "the placeholders are"}, {3, "", "rotation.grace: -1h0m0s is negative"},
		{4, "", "rotation.delete_after: -2h0m0s is negative"}, {5, "", "rotation.recheck: -1s is negative"}})
}

// A section that validates itself (gates:, certs:) names the problem of each of its
// keys, not only the first; a key it requires is still said once.
func TestCheck_everyKeyOfASection(t *testing.T) {
	isolate(t)
	yaml := "gates:\n  auto: [lo]\n  approvers: [\"\", bob]\n  expiry: -1h\ncerts:\n  directory: \"ftp://x\"\n  challenge: nope\n"
	r := config.CheckData(context.Background(), []byte(yaml), "w.yaml", config.CheckOptions{SkipSettings: true, SkipSecrets: true})
	checkProblems(t, r, []want{{2, "gates.auto[0]", `unknown risk "lo"`}, {3, "gates.approvers", "gates.signers lists no keys"}, {3, "gates.approvers[0]", "empty approver name"},
		{4, "gates.expiry", "want a positive duration"}, {6, "certs.directory", "not an absolute http(s) URL"},
		{7, "certs.challenge", "want a mapping"}})
}
