package certs

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/warden-sec/warden/internal/loopback"
	"github.com/warden-sec/warden/internal/suggest"
	"github.com/warden-sec/warden/internal/yamlerr"
)

// ArchiveKeyEnv names the environment variable holding the archive key (base64 of 32
// random bytes) when the config names no archive_key_file.
const ArchiveKeyEnv = "WARDEN_CERTS_ARCHIVE_KEY"

// Config is the certs: section of warden's config: where certificates are renewed (an
// ACME directory), how the CA's challenges are answered, when a certificate is due, how
// the archive of replaced material is encrypted, and where each TLS endpoint's
// certificate is delivered.
//
//	certs:
//	  directory: https://acme-v02.api.letsencrypt.org/directory
//	  email: security@acme.example
//	  ca_bundle: /etc/warden/acme-ca.pem     # optional: trust a private ACME server
//	  key_type: ec256                        # ec256 (default), ec384, rsa2048, rsa3072, rsa4096
//	  challenge:
//	    http01: {listen: 127.0.0.1:5002}     # or dns01: {provider: exec, program: /usr/local/bin/dns-hook}
//	  renew_before: 720h                     # default: once two thirds of the lifetime have passed
//	  archive_key_file: /etc/warden/certs.key # or WARDEN_CERTS_ARCHIVE_KEY
//	  targets:
//	    shop.acme.example:443:
//	      files: {cert: /etc/nginx/tls/shop.crt, key: /etc/nginx/tls/shop.key}
//	      reload: [/usr/sbin/nginx, -s, reload]
//
// Registering with the directory agrees to its terms of service: naming a directory here
// is that agreement.
type Config struct {
	// Directory is the ACME directory URL (https; http only on loopback).
	Directory string
	// Email is the ACME account's contact; optional.
	Email string
	// CABundle is a PEM file of roots to trust for the directory (pebble's, a private
	// CA's) instead of the system's.
	CABundle string
	// KeyType is the type of every new certificate key (lego's names: EC256, RSA2048, …).
	KeyType string
	// Challenge says how the CA's challenges are answered: exactly one of the two.
	Challenge Challenge
	// RenewBefore makes a certificate due this long before it expires; zero means once
	// two thirds of its lifetime have passed.
	RenewBefore time.Duration
	// ArchiveKeyFile holds the archive key (base64 of 32 bytes); empty means the
	// environment variable WARDEN_CERTS_ARCHIVE_KEY.
	ArchiveKeyFile string
	// Targets deliver the certificates of TLS endpoints, by "host:port" as the
	// tls.endpoint resource names it. ACM certificates need none: they are re-imported
	// under their own ARN.
	Targets map[string]Target

	lines map[string]int // the line of each field, by its path below certs:
}

// Challenge is the ACME challenge warden answers.
type Challenge struct {
	HTTP01 *HTTP01
	DNS01  *DNS01
}

// HTTP01 answers http-01 challenges on a listener of its own: the CA fetches
// http://DOMAIN/.well-known/acme-challenge/TOKEN, so port 80 of every domain must reach
// it (a proxy forwarding that path, or the listener itself).
type HTTP01 struct {
	Listen string
}

// DNS01 answers dns-01 challenges through a DNS provider: Provider names one lego
// provider package warden was built with ("exec": a program adds and removes the TXT
// record, called as PROGRAM present|cleanup FQDN VALUE, with no shell).
type DNS01 struct {
	Provider string
	// Program and Mode configure the exec provider (Mode "RAW" passes the domain, token
	// and key authorization instead of the record).
	Program string
	Mode    string
	// PropagationTimeout bounds the wait for the record to be visible; zero means lego's.
	PropagationTimeout time.Duration
	// PropagationWait, when set, waits this long instead of checking that the record
	// propagated (for resolvers warden cannot query).
	PropagationWait time.Duration
}

// Target is where one TLS endpoint's certificate is delivered.
type Target struct {
	Files Files
	// Reload runs after the files are written (and after a rollback rewrites them): the
	// program (an absolute path) and its arguments, without a shell.
	Reload []string
	// Domains override the names the certificate is issued for; empty means the names
	// of the certificate the endpoint serves.
	Domains []string
}

// Files are the PEM files a server reads. Chain is optional: without it the certificate
// file holds the full chain (leaf first), as most servers want.
type Files struct {
	Cert  string
	Key   string
	Chain string
}

// dnsProviders are the DNS-01 providers this build knows, by config name.
var dnsProviders = []string{"exec"}

// keyTypes are the accepted key_type values (lower case), as lego names them.
var keyTypes = map[string]string{"ec256": "EC256", "ec384": "EC384", "rsa2048": "RSA2048", "rsa3072": "RSA3072", "rsa4096": "RSA4096"}

// ConfigError is a problem with the certs: section. Line is its line in the YAML it was
// read from (0 for a Config built in Go); Field is the key below certs:
// ("targets.shop.acme.example:443.files.key"). Its Detail is the error without the line
// ("certs.challenge.http01.listen: …").
type ConfigError = yamlerr.Error

// configError is a problem with field of the certs: section, at line.
func configError(line int, field, msg string) *ConfigError {
	return &ConfigError{Section: "certs", Line: line, Field: field, Msg: msg}
}

// ParseConfig reads the body of a certs: section (a YAML mapping) and validates it.
func ParseConfig(data []byte) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, configError(0, "", "empty: want a mapping with directory, challenge, …")
		}
		return nil, configError(0, "", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	n := &root
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	var c Config
	if err := c.UnmarshalYAML(n); err != nil {
		return nil, err
	}
	return &c, nil
}

// UnmarshalYAML reads the certs: section and validates it; errors are *ConfigError with
// the line of the offending key, every problem of the section (errors.Join of them when
// there are more than one: those read in the order of the file, then those validating
// finds). Unknown keys are errors, so that a typo does not leave a default in force.
func (c *Config) UnmarshalYAML(n *yaml.Node) error {
	out := Config{lines: map[string]int{"": n.Line}}
	p := &parser{lines: out.lines}
	p.mapping(n, "", map[string]func(string, *yaml.Node){
		"directory":        p.str(&out.Directory),
		"email":            p.str(&out.Email),
		"ca_bundle":        p.str(&out.CABundle),
		"key_type":         p.str(&out.KeyType),
		"renew_before":     p.duration(&out.RenewBefore),
		"archive_key_file": p.str(&out.ArchiveKeyFile),
		"challenge": func(field string, v *yaml.Node) {
			p.mapping(v, field, map[string]func(string, *yaml.Node){
				"http01": func(field string, v *yaml.Node) {
					out.Challenge.HTTP01 = &HTTP01{}
					p.mapping(v, field, map[string]func(string, *yaml.Node){
						"listen": p.str(&out.Challenge.HTTP01.Listen),
					})
				},
				"dns01": func(field string, v *yaml.Node) {
					d := &DNS01{}
					out.Challenge.DNS01 = d
					p.mapping(v, field, map[string]func(string, *yaml.Node){
						"provider":            p.str(&d.Provider),
						"program":             p.str(&d.Program),
						"mode":                p.str(&d.Mode),
						"propagation_timeout": p.duration(&d.PropagationTimeout),
						"propagation_wait":    p.duration(&d.PropagationWait),
					})
				},
			})
		},
		"targets": func(field string, v *yaml.Node) {
			if v.Kind != yaml.MappingNode {
				p.add(configError(v.Line, field, "want a mapping of host:port to a delivery"))
				return
			}
			out.Targets = map[string]Target{}
			for i := 0; i+1 < len(v.Content); i += 2 {
				k, tv := v.Content[i], v.Content[i+1]
				name := field + "." + k.Value
				if _, dup := out.Targets[k.Value]; dup {
					p.add(configError(k.Line, name, fmt.Sprintf("given twice (also line %d)", out.lines[name])))
					continue
				}
				out.lines[name] = k.Line
				var t Target
				p.mapping(tv, name, map[string]func(string, *yaml.Node){
					"files": func(field string, v *yaml.Node) {
						p.mapping(v, field, map[string]func(string, *yaml.Node){
							"cert":  p.str(&t.Files.Cert),
							"key":   p.str(&t.Files.Key),
							"chain": p.str(&t.Files.Chain),
						})
					},
					"reload":  p.strs(&t.Reload),
					"domains": p.strs(&t.Domains),
				})
				out.Targets[k.Value] = t
			}
		},
	})
	if err := yamlerr.Join(yamlerr.Merge(p.errs, out.validate())); err != nil {
		return err
	}
	*c = out
	return nil
}

// parser reads YAML nodes into fields, recording their lines and collecting every
// problem: a field that cannot be read is left at its zero value.
type parser struct {
	lines map[string]int
	errs  []*ConfigError
}

func (p *parser) add(e *ConfigError) { p.errs = append(p.errs, e) }

func (p *parser) mapping(n *yaml.Node, field string, keys map[string]func(string, *yaml.Node)) {
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	slices.Sort(names)
	if n.Kind != yaml.MappingNode {
		p.add(configError(n.Line, field, "want a mapping with keys "+strings.Join(names, ", ")))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if field != "" {
			name = field + "." + k.Value
		}
		fn, ok := keys[k.Value]
		if !ok {
			msg := fmt.Sprintf("unknown key %q (known: %s)", k.Value, strings.Join(names, ", "))
			if s := suggest.Closest(k.Value, names); s != "" {
				msg = fmt.Sprintf("unknown key %q (did you mean %q?)", k.Value, s)
			}
			p.add(configError(k.Line, strings.TrimPrefix(field+"."+k.Value, "."), msg))
			continue
		}
		if seen[k.Value] {
			p.add(configError(k.Line, name, fmt.Sprintf("given twice (also line %d)", p.lines[name])))
			continue
		}
		seen[k.Value] = true
		p.lines[name] = k.Line
		fn(name, v)
	}
}

func (p *parser) str(dst *string) func(string, *yaml.Node) {
	return func(field string, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			p.add(configError(v.Line, field, "want a string"))
			return
		}
		*dst = v.Value
	}
}

func (p *parser) strs(dst *[]string) func(string, *yaml.Node) {
	return func(field string, v *yaml.Node) {
		if v.Kind != yaml.SequenceNode {
			p.add(configError(v.Line, field, "want a list of strings"))
			return
		}
		out := make([]string, 0, len(v.Content))
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Tag == "!!null" {
				p.add(configError(e.Line, fmt.Sprintf("%s[%d]", field, i), "want a string"))
				out = append(out, "") // the others keep their index
				continue
			}
			out = append(out, e.Value)
		}
		*dst = out
	}
}

func (p *parser) duration(dst *time.Duration) func(string, *yaml.Node) {
	return func(field string, v *yaml.Node) {
		if v.Kind != yaml.ScalarNode {
			p.add(configError(v.Line, field, "want a duration (720h, 30d)"))
			return
		}
		d, err := parseDuration(v.Value)
		if err != nil {
			p.add(configError(v.Line, field, err.Error()))
			return
		}
		*dst = d
	}
}

// parseDuration reads a Go duration, or a whole number of days ("30d").
func parseDuration(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > 3650 {
			return 0, fmt.Errorf("%q is not a number of days from 0 to 3650", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (720h, 30d)", s)
	}
	return d, nil
}

func (c *Config) errorf(field, format string, args ...any) *ConfigError {
	return configError(c.line(field), field, fmt.Sprintf(format, args...))
}

// line is the line of a field, or of the nearest enclosing one given (a missing field
// is reported where its parent is).
func (c *Config) line(field string) int {
	for {
		if l, ok := c.lines[field]; ok {
			return l
		}
		i := strings.LastIndexAny(field, ".[")
		if i < 0 {
			return c.lines[""]
		}
		field = field[:i]
	}
}

// Validate checks the section; the error names the field, and there is one for each
// problem (errors.Join of them when there are more than one). Files (the CA bundle, the
// archive key) are read by New, not here.
func (c *Config) Validate() error {
	if c.lines == nil {
		c.lines = map[string]int{}
	}
	return yamlerr.Join(c.validate())
}

// validate is every problem of the section, a field's first problem each.
func (c *Config) validate() []*ConfigError {
	var errs []*ConfigError
	check := func(f func() *ConfigError) {
		if e := f(); e != nil {
			errs = append(errs, e)
		}
	}
	check(func() *ConfigError {
		if c.Directory == "" {
			return c.errorf("directory", "required: the ACME directory URL (https://…/directory)")
		}
		u, err := url.Parse(c.Directory)
		if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return c.errorf("directory", "%q is not an absolute http(s) URL", c.Directory)
		}
		if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
			return c.errorf("directory", "%q: plain http is allowed only on loopback; use https", c.Directory)
		}
		return nil
	})
	if c.Email != "" && (strings.Count(c.Email, "@") != 1 || strings.ContainsAny(c.Email, " \t\r\n<>,;:") ||
		strings.HasPrefix(c.Email, "@") || strings.HasSuffix(c.Email, "@")) {
		errs = append(errs, c.errorf("email", "%q is not an email address", c.Email))
	}
	if c.KeyType != "" {
		if _, ok := keyTypes[strings.ToLower(c.KeyType)]; !ok {
			errs = append(errs, c.errorf("key_type", "%q: want one of ec256, ec384, rsa2048, rsa3072, rsa4096", c.KeyType))
		}
	}
	if c.RenewBefore < 0 {
		errs = append(errs, c.errorf("renew_before", "must not be negative"))
	}
	check(func() *ConfigError {
		switch ch := c.Challenge; {
		case ch.HTTP01 == nil && ch.DNS01 == nil:
			return c.errorf("challenge", "required: http01: {listen: HOST:PORT} or dns01: {provider: …}")
		case ch.HTTP01 != nil && ch.DNS01 != nil:
			return c.errorf("challenge", "give http01 or dns01, not both")
		case ch.HTTP01 != nil:
			if err := checkHostPort(ch.HTTP01.Listen); err != nil {
				return c.errorf("challenge.http01.listen", "%v", err)
			}
		default:
			d := ch.DNS01
			switch {
			case d.Provider == "":
				return c.errorf("challenge.dns01.provider", "required: one of %s", strings.Join(dnsProviders, ", "))
			case !slices.Contains(dnsProviders, d.Provider):
				msg := fmt.Sprintf("unknown DNS provider %q: this warden knows %s", d.Provider, strings.Join(dnsProviders, ", "))
				if s := suggest.Closest(d.Provider, dnsProviders); s != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", s)
				}
				return c.errorf("challenge.dns01.provider", "%s", msg)
			case d.Provider == "exec" && !filepath.IsAbs(d.Program):
				return c.errorf("challenge.dns01.program", "the exec provider needs the absolute path of its program, got %q", d.Program)
			case d.Mode != "" && d.Mode != "RAW":
				return c.errorf("challenge.dns01.mode", "%q: want RAW or nothing", d.Mode)
			case d.PropagationTimeout < 0 || d.PropagationWait < 0:
				return c.errorf("challenge.dns01", "durations must not be negative")
			}
		}
		return nil
	})
	for _, name := range slices.Sorted(maps.Keys(c.Targets)) {
		t := c.Targets[name]
		field := "targets." + name
		if err := checkHostPort(name); err != nil {
			errs = append(errs, c.errorf(field, "%v (a TLS endpoint as host:port, as tls://host:port names it)", err))
			continue
		}
		files := map[string]string{"cert": t.Files.Cert, "key": t.Files.Key, "chain": t.Files.Chain}
		seen := map[string]string{}
		for _, k := range []string{"cert", "key", "chain"} {
			p := files[k]
			switch other, dup := seen[filepath.Clean(p)]; {
			case p == "" && k == "chain":
			case p == "":
				errs = append(errs, c.errorf(field+".files."+k, "required: the path of the %s PEM file", k))
			case !filepath.IsAbs(p):
				errs = append(errs, c.errorf(field+".files."+k, "%q is not an absolute path", p))
			case dup:
				errs = append(errs, c.errorf(field+".files."+k, "%q is also files.%s", p, other))
			default:
				seen[filepath.Clean(p)] = k
			}
		}
		if len(t.Reload) > 0 && !filepath.IsAbs(t.Reload[0]) {
			errs = append(errs, c.errorf(field+".reload", "the program must be an absolute path (no shell, no PATH lookup), got %q", t.Reload[0]))
		}
		for i, d := range t.Domains {
			if err := checkDomain(d); err != nil {
				errs = append(errs, c.errorf(fmt.Sprintf("%s.domains[%d]", field, i), "%v", err))
			}
		}
	}
	return errs
}

func checkHostPort(s string) error {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535", s)
	}
	if host == "" && !strings.HasPrefix(s, ":") {
		return fmt.Errorf("%q: the host is empty", s)
	}
	return nil
}

// checkDomain accepts a DNS name a CA can issue for: letters, digits, hyphens, dots,
// and a leading "*." for a wildcard.
func checkDomain(d string) error {
	name := strings.TrimPrefix(d, "*.")
	if name == "" || len(d) > 253 || strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, "..") {
		return fmt.Errorf("%q is not a domain name", d)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return fmt.Errorf("%q is not a domain name", d)
		}
	}
	return nil
}

// keyType is lego's name of the configured key type.
func (c *Config) keyType() string {
	if c.KeyType == "" {
		return "EC256"
	}
	return keyTypes[strings.ToLower(c.KeyType)]
}

// Due reports whether a certificate valid from notBefore to notAfter should be renewed
// at now: RenewBefore before it expires, or once two thirds of its lifetime have passed.
func (c *Config) Due(notBefore, notAfter, now time.Time) bool {
	if c != nil && c.RenewBefore > 0 {
		return !now.Before(notAfter.Add(-c.RenewBefore))
	}
	life := notAfter.Sub(notBefore)
	return !now.Before(notBefore.Add(life * 2 / 3))
}

// archiveKey is the key the archive is encrypted with. It never prints.
type archiveKey struct{ k [32]byte }

func (archiveKey) String() string   { return "[archive key redacted]" }
func (archiveKey) GoString() string { return "[archive key redacted]" }

// CheckArchiveKey reads the archive key as renewal will (the configured file, else
// $WARDEN_CERTS_ARCHIVE_KEY) and says what is wrong with it, for a config check; the
// key is dropped at once, and the error never holds it.
func (c *Config) CheckArchiveKey() error {
	k, err := c.loadArchiveKey()
	if k != nil {
		clear(k.k[:])
	}
	return err
}

// loadArchiveKey reads the archive key from the configured file, or from the
// environment. Its errors never hold the key.
func (c *Config) loadArchiveKey() (*archiveKey, error) {
	var raw string
	source := "$" + ArchiveKeyEnv
	field := "archive_key_file"
	if c.ArchiveKeyFile != "" {
		source = c.ArchiveKeyFile
		b, err := os.ReadFile(c.ArchiveKeyFile)
		if err != nil {
			return nil, c.errorf(field, "read the archive key: %v", errors.Unwrap(err))
		}
		raw = string(b)
	} else {
		raw = os.Getenv(ArchiveKeyEnv)
		if raw == "" {
			return nil, c.errorf(field, "no archive key: name a file holding base64 of 32 random bytes (head -c32 /dev/urandom | base64), or set %s", ArchiveKeyEnv)
		}
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw))
	if err != nil || len(b) != 32 {
		return nil, c.errorf(field, "the archive key in %s is not base64 of exactly 32 bytes", source)
	}
	k := &archiveKey{}
	copy(k.k[:], b)
	clear(b)
	return k, nil
}
