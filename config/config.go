// Package config reads warden's YAML configuration: policy settings, extra policy
// directories, waivers, the database, and (for collection) targets.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"
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

	File string `yaml:"-"`
}

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
	// RateLimits are calls per second per service and account ("iam": 10).
	RateLimits map[string]float64 `yaml:"rate_limits"`
	// Concurrency is the number of accounts read in parallel.
	Concurrency int `yaml:"concurrency"`
}

// GCPTargets say which GCP projects to read.
type GCPTargets struct {
	Projects []string `yaml:"projects"`
	// Endpoint overrides Google's endpoints (the simulator); credentials are then not sent.
	Endpoint string `yaml:"endpoint"`
	// RateLimit is calls per second per service and project.
	RateLimit float64 `yaml:"rate_limit"`
}

// Error is a problem in a config file, located by file and line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("read config %s: line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("read config %s: %s", e.File, e.Msg)
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
// silently ignored.
func Parse(data []byte, file string) (*Config, error) {
	c := &Config{File: file}
	if len(bytes.TrimSpace(data)) == 0 {
		return c, nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		return nil, yamlError(file, err)
	}
	for k := range c.Settings {
		if strings.TrimSpace(k) == "" {
			return nil, &Error{File: file, Msg: "settings: empty setting name"}
		}
	}
	c.Settings = JSONShape(c.Settings).(map[string]any)
	return c, nil
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

func yamlError(file string, err error) error {
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
	msg = strings.Replace(msg, "in type config.Config", "(known fields: settings, policies, waivers, db, fail_on, targets)", 1)
	return &Error{File: file, Line: line, Msg: msg}
}
