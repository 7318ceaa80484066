package certs

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/internal/yamlerr"
)

const goodConfig = `
directory: https://acme-v02.api.letsencrypt.org/directory
email: security@acme.example
key_type: rsa2048
challenge:
  http01: {listen: 127.0.0.1:5002}
renew_before: 30d
archive_key_file: /etc/warden/certs.key
targets:
  shop.acme.example:443:
    files: {cert: /etc/nginx/tls/shop.crt, key: /etc/nginx/tls/shop.key, chain: /etc/nginx/tls/chain.pem}
    reload: [/usr/sbin/nginx, -s, reload]
`

func TestParseConfig_good(t *testing.T) {
	c, err := ParseConfig([]byte(goodConfig))
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets["shop.acme.example:443"]
	if c.Challenge.HTTP01.Listen != "127.0.0.1:5002" || c.RenewBefore != 30*24*time.Hour || c.keyType() != "RSA2048" ||
		tg.Files.Chain != "/etc/nginx/tls/chain.pem" || strings.Join(tg.Reload, " ") != "/usr/sbin/nginx -s reload" {
		t.Fatalf("parsed %+v", c)
	}
	d, err := ParseConfig([]byte("directory: https://ca.example/dir\nchallenge: {dns01: {provider: exec, program: /usr/local/bin/hook, propagation_wait: 10s}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Challenge.DNS01.PropagationWait != 10*time.Second || d.keyType() != "EC256" {
		t.Fatalf("parsed %+v", d.Challenge.DNS01)
	}
}

// TestParseConfig_errorsNameTheField: every problem is a *ConfigError naming the field
// and its line.
func TestParseConfig_errorsNameTheField(t *testing.T) {
	base := "directory: https://ca.example/dir\nchallenge: {http01: {listen: 127.0.0.1:5002}}\n"
	tests := []struct {
		name, yaml, field, msg string
	}{
		{"no directory", "challenge: {http01: {listen: 127.0.0.1:5002}}\n", "directory", "required"},
		{"plain http", "directory: http://ca.example/dir\nchallenge: {http01: {listen: 127.0.0.1:5002}}\n", "directory", "only on loopback"},
		{"typo", base + "renew_befor: 30d\n", "renew_befor", `did you mean "renew_before"`},
		{"no challenge", "directory: https://ca.example/dir\n", "challenge", "required"},
		{"both challenges", "directory: https://ca.example/dir\nchallenge: {http01: {listen: ':80'}, dns01: {provider: exec, program: /x}}\n", "challenge", "not both"},
		{"bad listen", "directory: https://ca.example/dir\nchallenge: {http01: {listen: localhost}}\n", "challenge.http01.listen", "not host:port"},
		{"unknown provider", "directory: https://ca.example/dir\nchallenge: {dns01: {provider: route53}}\n", "challenge.dns01.provider", `unknown DNS provider "route53"`},
		{"exec without program", "directory: https://ca.example/dir\nchallenge: {dns01: {provider: exec}}\n", "challenge.dns01.program", "absolute path"},
		{"bad email", base + "email: not-an-address\n", "email", "not an email"},
		{"bad key type", base + "key_type: dsa\n", "key_type", "want one of"},
		{"bad duration", base + "renew_before: soon\n", "renew_before", "not a duration"},
		{"target not host:port", base + "targets: {shop: {files: {cert: /c, key: /k}}}\n", "targets.shop", "not host:port"},
		{"no key file", base + "targets: {'shop:443': {files: {cert: /c}}}\n", "targets.shop:443.files.key", "required"},
		{"relative cert", base + "targets: {'shop:443': {files: {cert: c.pem, key: /k}}}\n", "targets.shop:443.files.cert", "not an absolute path"},
		{"same file twice", base + "targets: {'shop:443': {files: {cert: /c, key: /c}}}\n", "targets.shop:443.files.key", "also files.cert"},
		{"reload through PATH", base + "targets: {'shop:443': {files: {cert: /c, key: /k}, reload: [nginx, -s, reload]}}\n", "targets.shop:443.reload", "absolute path"},
		{"reload not a list", base + "targets: {'shop:443': {files: {cert: /c, key: /k}, reload: /bin/true}}\n", "targets.shop:443.reload", "list of strings"},
		{"bad domain", base + "targets: {'shop:443': {files: {cert: /c, key: /k}, domains: ['a b']}}\n", "targets.shop:443.domains[0]", "not a domain"},
		{"unknown file role", base + "targets: {'shop:443': {files: {cert: /c, key: /k, fullchain: /f}}}\n", "targets.shop:443.files.fullchain", "unknown key"},
		{"twice", base + "email: a@b.example\nemail: c@d.example\n", "email", "given twice"},
		{"not a mapping", "- a\n", "", "want a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("ParseConfig = %v, want a *ConfigError", err)
			}
			if ce.Field != tt.field || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("error %q: field %q, want %q containing %q", err, ce.Field, tt.field, tt.msg)
			}
			if tt.field != "" && ce.Line == 0 {
				t.Errorf("error %q has no line", err)
			}
			if want := "certs." + tt.field; tt.field != "" && !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %s", err, want)
			}
		})
	}
}

func TestDue(t *testing.T) {
	nb := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	na := nb.Add(90 * 24 * time.Hour)
	tests := []struct {
		name string
		cfg  *Config
		now  time.Time
		want bool
	}{
		{"fresh", nil, nb.Add(24 * time.Hour), false},
		{"just before two thirds", nil, nb.Add(60*24*time.Hour - time.Second), false},
		{"at two thirds", nil, nb.Add(60 * 24 * time.Hour), true},
		{"renew_before not reached", &Config{RenewBefore: 10 * 24 * time.Hour}, na.Add(-11 * 24 * time.Hour), false},
		{"renew_before reached", &Config{RenewBefore: 10 * 24 * time.Hour}, na.Add(-10 * 24 * time.Hour), true},
	}
	for _, tt := range tests {
		if got := tt.cfg.Due(nb, na, tt.now); got != tt.want {
			t.Errorf("%s: Due = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestArchiveKey_errorsNeverShowTheKey: a malformed key is refused without echoing it.
func TestArchiveKey_errorsNeverShowTheKey(t *testing.T) {
	secret := base64.StdEncoding.EncodeToString([]byte("sixteen-byte-key"))
	t.Setenv(ArchiveKeyEnv, secret)
	c := &Config{}
	_, err := c.loadArchiveKey()
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "32 bytes") {
		t.Fatalf("loadArchiveKey = %v", err)
	}
	file := filepath.Join(t.TempDir(), "k")
	if err := os.WriteFile(file, []byte("not base64 at all: hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.ArchiveKeyFile = file
	_, err = c.loadArchiveKey()
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "archive_key_file") {
		t.Fatalf("loadArchiveKey = %v", err)
	}
	good := make([]byte, 32)
	if err := os.WriteFile(file, []byte(base64.StdEncoding.EncodeToString(good)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := c.loadArchiveKey()
	if err != nil {
		t.Fatal(err)
	}
	if s := k.String(); strings.Contains(s, "AAAA") || !strings.Contains(s, "redacted") {
		t.Errorf("the key prints as %q", s)
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(goodConfig))
	f.Add([]byte("directory: https://ca.example/dir\nchallenge: {dns01: {provider: exec, program: /x}}\n"))
	f.Add([]byte("targets: {'a:1': {files: {cert: /c, key: /k}, reload: [/bin/true]}}"))
	f.Add([]byte("renew_before: 99999999d"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("a parsed config does not validate: %v", err)
		}
		if (c.Challenge.HTTP01 == nil) == (c.Challenge.DNS01 == nil) {
			t.Fatal("a parsed config without exactly one challenge")
		}
	})
}

// A section with several problems, in one key or in several, reports every one, each
// with its field and line; one problem is the *ConfigError itself, as it always was.
func TestParseConfig_reportsEveryProblem(t *testing.T) {
	type problem struct {
		line       int
		field, msg string
	}
	tests := []struct {
		name string
		yaml string
		want []problem
	}{
		{"three problems in one target", `directory: https://ca.example/dir
challenge: {http01: {listen: 127.0.0.1:5002}}
targets:
  shop:443:
    files: {cert: c.pem, key: /k, fulchain: /f}
    reload: [nginx]
    domains: [shop.example, 'a b', [x]]
`, []problem{
			{5, "targets.shop:443.files.fulchain", "unknown key"},
			{7, "targets.shop:443.domains[2]", "want a string"},
			{5, "targets.shop:443.files.cert", "not an absolute path"},
			{6, "targets.shop:443.reload", "absolute path"},
			{7, "targets.shop:443.domains[1]", "not a domain"},
		}},
		{"problems in several keys", `directory: http://ca.example/dir
email: nobody
key_type: dsa
renew_before: soon
challenge:
  dns01: {provider: route53, mode: cooked, propagation_wait: never}
`, []problem{
			{4, "renew_before", "not a duration"},
			{6, "challenge.dns01.propagation_wait", "not a duration"},
			{1, "directory", "only on loopback"},
			{2, "email", "not an email"},
			{3, "key_type", "want one of"},
			{6, "challenge.dns01.provider", "unknown DNS provider"},
		}},
		// What cannot be read is not judged again: an unreadable directory is not
		// also "required", nor an unreadable http01 a listen that is not host:port.
		{"an unread value is not judged", "directory: [x]\nchallenge:\n  http01: localhost\n", []problem{
			{1, "directory", "want a string"},
			{3, "challenge.http01", "want a mapping"},
		}},
		{"one problem", "directory: https://ca.example/dir\nchallenge: {http01: {listen: localhost}}\n", []problem{
			{2, "challenge.http01.listen", "not host:port"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tt.yaml))
			got := yamlerr.Errors(err)
			if len(got) != len(tt.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(got), len(tt.want), err)
			}
			for i, w := range tt.want {
				if got[i].Line != w.line || got[i].Field != w.field || !strings.Contains(got[i].Msg, w.msg) {
					t.Errorf("problem %d = %v\nwant line %d: certs.%s: …%s…", i, got[i], w.line, w.field, w.msg)
				}
			}
			if _, ok := err.(*ConfigError); (len(tt.want) == 1) != ok {
				t.Errorf("error is %T, want a *ConfigError for one problem, a join for more", err)
			}
		})
	}
}
