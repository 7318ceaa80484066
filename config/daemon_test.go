package config

import (
	"strings"
	"testing"
	"time"
)

func TestParse_daemon(t *testing.T) {
	c, err := Parse([]byte(`daemon:
  schedules:
    aws: "*/15 * * * *"
    tls: "@every 6h"
  full_every: 12h
  job_timeout: 2m
  dry_run: true
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	d := c.Daemon
	if d.Schedules["aws"] != "*/15 * * * *" || d.FullEvery != 12*time.Hour || d.JobTimeout != 2*time.Minute || !d.DryRun {
		t.Errorf("daemon = %+v", d)
	}
	if d.RescueAfter != DefaultRescueAfter {
		t.Errorf("rescue_after = %v, want the default %v", d.RescueAfter, DefaultRescueAfter)
	}
	s, _ := ParseSchedule(d.Schedules["aws"])
	at := time.Date(2026, 12, 3, 10, 7, 0, 0, time.UTC)
	if next := s.Next(at); !next.Equal(time.Date(2026, 12, 3, 10, 15, 0, 0, time.UTC)) {
		t.Errorf("next tick after 10:07 = %v, want 10:15", next)
	}
	empty, err := Parse(nil, "empty.yaml")
	if err != nil || empty.Daemon.FullEvery != DefaultFullEvery || empty.Daemon.JobTimeout != DefaultJobTimeout || empty.Daemon.Spread() != DefaultSweepSpread {
		t.Errorf("defaults: %+v %v", empty.Daemon, err)
	}
	if none, err := Parse([]byte("daemon:\n  sweep_spread: 0\n"), "warden.yaml"); err != nil || none.Daemon.Spread() != 0 {
		t.Errorf("sweep_spread 0: %v %v", none.Daemon.Spread(), err)
	}
}

func TestParse_daemonErrorsNameTheField(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"bad cron", "daemon:\n  schedules:\n    aws: \"*/15 * *\"\n", "line 3: daemon.schedules.aws: schedule \"*/15 * *\""},
		{"unknown kind", "daemon:\n  schedules:\n    awss: \"@hourly\"\n", `daemon.schedules.awss: not a kind of target (want aws, gcp or tls) (did you mean "aws"?)`},
		{"rescue before timeout", "daemon:\n  job_timeout: 20m\n  rescue_after: 10m\n", "line 3: daemon.rescue_after (10m0s) must exceed daemon.job_timeout (20m0s)"},
		{"negative", "daemon:\n  full_every: -1h\n", "line 2: daemon.full_every must not be negative"},
		{"unknown field", "daemon:\n  schedule: \"@hourly\"\n", "line 2: field schedule not found"},
		{"not a duration", "daemon:\n  full_every: often\n", "line 2:"},
		{"spread above 1", "daemon:\n  sweep_spread: 2\n", "line 2: daemon.sweep_spread 2: want a share of the schedule's period between 0 and 1"},
		{"negative spread", "daemon:\n  sweep_spread: -0.1\n", "line 2: daemon.sweep_spread -0.1"},
		{"negative readers", "daemon:\n  readers: -2\n", "line 2: daemon.readers -2: want a number of collections run at once"},
		{"negative full reads", "daemon:\n  full_reads: -1\n", "line 2: daemon.full_reads -1: want a number of scopes read in full at once"},
		{"memory limit not a size", "daemon:\n  readers: 8\n  memory_limit: lots\n", `line 3: daemon.memory_limit: "lots" is not a size: want a positive number of bytes such as 1048576, 512KiB, 16MiB or 2GiB, or off`},
		{"memory limit too small", "daemon:\n  memory_limit: 64MiB\n", "line 2: daemon.memory_limit 64MiB: below 128 MiB the collector would run all the time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "warden.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "warden.yaml") {
				t.Errorf("error = %v, want one naming warden.yaml and %q", err, c.want)
			}
		})
	}
}

func TestParse_daemonTraces(t *testing.T) {
	c, err := Parse([]byte(`daemon:
  otlp_endpoint: https://otel-collector.internal:4318
  trace_sample_ratio: 0.25
`), "warden.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Daemon; d.OTLPEndpoint != "https://otel-collector.internal:4318" || d.TraceSampleRatio == nil || *d.TraceSampleRatio != 0.25 {
		t.Errorf("daemon = %+v", d)
	}
	// 0 is a ratio of its own (only the traces a caller sampled), not "unset".
	zero, err := Parse([]byte("daemon:\n  otlp_endpoint: http://127.0.0.1:4318\n  trace_sample_ratio: 0\n"), "warden.yaml")
	if err != nil || zero.Daemon.TraceSampleRatio == nil || *zero.Daemon.TraceSampleRatio != 0 {
		t.Errorf("ratio 0: %+v %v", zero.Daemon, err)
	}
	empty, err := Parse([]byte("daemon:\n  dry_run: true\n"), "warden.yaml")
	if err != nil || empty.Daemon.OTLPEndpoint != "" || empty.Daemon.TraceSampleRatio != nil {
		t.Errorf("defaults: %+v %v (want no endpoint, and the ratio left to the default)", empty.Daemon, err)
	}
}

func TestParse_daemonTraceErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"grpc scheme", "daemon:\n  dry_run: false\n  otlp_endpoint: grpc://collector:4317\n", `line 3: daemon.otlp_endpoint "grpc://collector:4317": want an http:// or https:// URL`},
		{"no scheme", "daemon:\n  otlp_endpoint: collector:4318\n", "line 2: daemon.otlp_endpoint"},
		{"no host", "daemon:\n  otlp_endpoint: http://\n", `line 2: daemon.otlp_endpoint "http:": no host`},
		{"password", "daemon:\n  otlp_endpoint: https://bob:hunter2@collector:4318\n", "line 2: daemon.otlp_endpoint \"https://bob:xxxxx@collector:4318\": no user or password in the URL: put the collector's credentials in $OTEL_EXPORTER_OTLP_HEADERS"},
		{"query", "daemon:\n  otlp_endpoint: http://collector:4318/?key=1\n", "line 2: daemon.otlp_endpoint \"http://collector:4318/?key=1\": a query or fragment has no place in it"},
		{"not a URL", "daemon:\n  otlp_endpoint: \"http://collector:43 18\"\n", "line 2: daemon.otlp_endpoint is not a URL"},
		{"ratio above 1", "daemon:\n  otlp_endpoint: http://collector:4318\n  trace_sample_ratio: 10\n", "line 3: daemon.trace_sample_ratio 10: want a share between 0 and 1"},
		{"negative ratio", "daemon:\n  trace_sample_ratio: -0.5\n", "line 2: daemon.trace_sample_ratio -0.5: want a share between 0 and 1"},
		{"ratio not a number", "daemon:\n  trace_sample_ratio: often\n", "line 2:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "warden.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "warden.yaml") {
				t.Errorf("error = %v, want one naming warden.yaml and %q", err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the error shows the password: %v", err)
			}
		})
	}
}

func TestParse_daemonBudget(t *testing.T) {
	for _, c := range []struct {
		name, yaml            string
		perHour, perAcct, brk int
	}{
		{"defaults", "daemon: {}\n", DefaultMaxFixesPerHour, DefaultMaxFixesPerAccountPerHour, DefaultPauseAfterFailures},
		{"set", "daemon:\n  max_fixes_per_hour: 10\n  max_fixes_per_account_per_hour: 3\n  pause_after_failures: 2\n", 10, 3, 2},
		{"off", "daemon:\n  max_fixes_per_hour: -1\n  max_fixes_per_account_per_hour: -1\n  pause_after_failures: -1\n", -1, -1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := Parse([]byte(c.yaml), "warden.yaml")
			if err != nil {
				t.Fatal(err)
			}
			d := cfg.Daemon
			if d.MaxFixesPerHour != c.perHour || d.MaxFixesPerAccountPerHour != c.perAcct || d.PauseAfterFailures != c.brk {
				t.Errorf("budget = %d/h, %d/h per account, pause after %d; want %d, %d, %d",
					d.MaxFixesPerHour, d.MaxFixesPerAccountPerHour, d.PauseAfterFailures, c.perHour, c.perAcct, c.brk)
			}
		})
	}
	if _, err := Parse([]byte("daemon:\n  max_fixes_per_hour: many\n"), "warden.yaml"); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a budget that is not a number: %v", err)
	}
}

func TestParse_daemonMemoryLimit(t *testing.T) {
	for _, v := range []string{"900MiB", "2GiB", "off", "2000000000"} {
		c, err := Parse([]byte("daemon:\n  memory_limit: "+v+"\n"), "warden.yaml")
		if err != nil {
			t.Errorf("memory_limit %s: %v", v, err)
			continue
		}
		if c.Daemon.MemoryLimit != v {
			t.Errorf("memory_limit %s read as %q", v, c.Daemon.MemoryLimit)
		}
	}
}
