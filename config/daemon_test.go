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
	if err != nil || empty.Daemon.FullEvery != DefaultFullEvery || empty.Daemon.JobTimeout != DefaultJobTimeout {
		t.Errorf("defaults: %+v %v", empty.Daemon, err)
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
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "warden.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "warden.yaml") {
				t.Errorf("error = %v, want one naming warden.yaml and %q", err, c.want)
			}
		})
	}
}
