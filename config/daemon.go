package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/warden-sec/warden/internal/bytesize"
	"github.com/warden-sec/warden/internal/suggest"
)

// Daemon is the daemon: section: what warden serve reconciles on its own, and when.
//
//	daemon:
//	  schedules:                 # cron (minute hour day month weekday), or @every 15m, @hourly
//	    aws: "*/15 * * * *"
//	    gcp: "0 * * * *"
//	    tls: "@every 6h"
//	  full_every: 24h            # evaluate unchanged resources again at least this often
//	  sweep_spread: 0.5          # a scheduled sweep's reads spread over this share of its period
//	  readers: 256               # collections a replica runs at once (reading waits on rate limits)
//	  full_reads: 16             # of which reading their scope in full (decoding, holding it) at once
//	  memory_limit: 900MiB       # the Go runtime's soft limit (default 90% of the cgroup's; off: none)
//	  rescue_after: 15m          # a job running longer than this on a dead replica is retried
//	  job_timeout: 10m           # a job running longer than this is cancelled and retried
//	  events_token_file: /etc/warden/events.token   # or $WARDEN_EVENTS_TOKEN
//	  dry_run: false             # plan and ask, never apply
//	  otlp_endpoint: http://otel-collector:4318     # traces over OTLP/HTTP (or $OTEL_EXPORTER_OTLP_ENDPOINT)
//	  trace_sample_ratio: 0.1    # share of new traces recorded (default 1)
type Daemon struct {
	// Schedules say when each kind of target (aws, gcp, tls) is read in full.
	Schedules map[string]string `yaml:"schedules"`
	// FullEvery bounds how long an unchanged resource goes unevaluated.
	FullEvery time.Duration `yaml:"full_every"`
	// SweepSpread is the share of a schedule's period (0 to 1) over which a scheduled
	// sweep's collections start, each scope at its own offset, so that the organisation
	// is not read all at the cron minute (nil: DefaultSweepSpread; 0: all at once). The
	// first sweep after a replica starts, and sweeps asked for by POST /v1/reconcile,
	// read at once, and bring forward collections a spread sweep had scheduled later; so
	// does the sweep a replica fires when it takes the lead back.
	SweepSpread *float64 `yaml:"sweep_spread"`
	// Readers is how many collections a replica runs at once (0: the daemon's default,
	// 64). A collection mostly waits on the cloud's rate limits, which are per account:
	// more readers bring a sweep of many accounts closer to those limits' floor. What
	// they read is judged --workers at a time.
	Readers int `yaml:"readers"`
	// FullReads is how many of them read their scope in full at once (0: the daemon's
	// default, 16): a full read decodes its whole scope and holds it until it is judged,
	// where a collection replaying its scope's last read (an unchanged AWS scope) holds
	// little. More full reads make a first sweep hold more scopes in memory at once.
	FullReads int `yaml:"full_reads"`
	// MemoryLimit is the soft limit the Go runtime holds the replica's memory under
	// (runtime/debug.SetMemoryLimit), collecting garbage more often as it nears it:
	// "900MiB", "2GiB" (bytesize.Parse), or "off". Empty: 90% of the memory limit of the
	// replica's cgroup (a container's limit) when it has one, else none. $GOMEMLIMIT,
	// when set, wins over both.
	MemoryLimit string `yaml:"memory_limit"`
	// RescueAfter is how long a job may run before the queue takes it for abandoned (its
	// replica died) and runs it again; it must exceed the longest job (JobTimeout).
	RescueAfter time.Duration `yaml:"rescue_after"`
	// JobTimeout bounds one job's run.
	JobTimeout time.Duration `yaml:"job_timeout"`
	// EventsTokenFile holds the bearer token of /v1/events and /v1/reconcile (readable
	// by its owner only); $WARDEN_EVENTS_TOKEN takes precedence.
	EventsTokenFile string `yaml:"events_token_file"`
	// DryRun plans and asks for approvals but never applies.
	DryRun bool `yaml:"dry_run"`
	// OTLPEndpoint is the OpenTelemetry collector's OTLP/HTTP base URL traces are sent
	// to (http://collector:4318: traces go to /v1/traces below it). Empty: the standard
	// $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or $OTEL_EXPORTER_OTLP_ENDPOINT, else no
	// traces. Credentials go in $OTEL_EXPORTER_OTLP_HEADERS, never in the URL.
	OTLPEndpoint string `yaml:"otlp_endpoint"`
	// TraceSampleRatio is the share of new traces recorded, between 0 and 1 (nil: 1, or
	// what $OTEL_TRACES_SAMPLER says). A trace whose caller sent a traceparent follows
	// the caller's decision.
	TraceSampleRatio *float64 `yaml:"trace_sample_ratio"`
	// MaxFixesPerHour bounds the fixes begun in any hour by every replica together, and
	// MaxFixesPerAccountPerHour those in one account (0: the defaults; negative: no
	// bound): the daemon applies one fix per job, so warden apply's caps per run do not
	// bound it. A fix over the budget waits for the next hour.
	MaxFixesPerHour           int `yaml:"max_fixes_per_hour"`
	MaxFixesPerAccountPerHour int `yaml:"max_fixes_per_account_per_hour"`
	// PauseAfterFailures pauses remediation once that many fixes in a row have failed
	// (0: the default; negative: never); warden resume lifts it.
	PauseAfterFailures int `yaml:"pause_after_failures"`
	// DeniedWindow is how long after a right-sizing fix an access-denied event for a
	// permission it removed opens a critical WARDEN-WATCH-001 finding (default 720h, 30
	// days; reconcile/watch).
	DeniedWindow time.Duration `yaml:"denied_window"`
	// RollbackOnDenied rolls such a fix back at once, as `warden rollback` would
	// (default false: the finding names the command, a person runs it).
	RollbackOnDenied bool `yaml:"rollback_on_denied"`
}

// Defaults of the daemon: section.
const (
	DefaultFullEvery   = 24 * time.Hour
	DefaultJobTimeout  = 10 * time.Minute
	DefaultRescueAfter = 15 * time.Minute
	// The defaults of the budget: a first sweep of a large organisation converges over
	// hours rather than changing hundreds of resources at once.
	DefaultMaxFixesPerHour           = 60
	DefaultMaxFixesPerAccountPerHour = 20
	DefaultPauseAfterFailures        = 5
	// DefaultDeniedWindow is daemon.denied_window's default: watch.DefaultWindow.
	DefaultDeniedWindow = 30 * 24 * time.Hour
	// DefaultSweepSpread is daemon.sweep_spread's default: half the period, leaving the
	// other half for retries before the next sweep.
	DefaultSweepSpread = 0.5
)

// MemoryLimitOff is the daemon.memory_limit that sets no limit, even in a cgroup that has one.
const MemoryLimitOff = "off"

// MinMemoryLimit is the smallest daemon.memory_limit taken: the compiled policies and the
// job queue alone hold tens of megabytes.
const MinMemoryLimit = 128 << 20

// Spread is daemon.sweep_spread, or its default.
func (d Daemon) Spread() float64 {
	if d.SweepSpread == nil {
		return DefaultSweepSpread
	}
	return *d.SweepSpread
}

// TargetKinds are the keys of daemon.schedules.
var TargetKinds = []string{"aws", "gcp", "tls"}

// ParseSchedule reads a cron expression as daemon.schedules and --schedule take it: five
// fields (minute hour day-of-month month day-of-week) or a descriptor (@hourly, @every 15m).
func ParseSchedule(expr string) (cron.Schedule, error) {
	s, err := cron.ParseStandard(strings.TrimSpace(expr))
	if err != nil {
		return nil, fmt.Errorf("schedule %q: %v (want 5 fields: minute hour day month weekday, or @every 15m, @hourly)", expr, err)
	}
	return s, nil
}

// WithDefaults is d with the defaults in place of what it leaves out.
func (d Daemon) WithDefaults() Daemon {
	if d.FullEvery == 0 {
		d.FullEvery = DefaultFullEvery
	}
	if d.JobTimeout == 0 {
		d.JobTimeout = DefaultJobTimeout
	}
	if d.DeniedWindow == 0 {
		d.DeniedWindow = DefaultDeniedWindow
	}
	if d.RescueAfter == 0 {
		d.RescueAfter = max(DefaultRescueAfter, d.JobTimeout+time.Minute)
	}
	def := func(v *int, n int) {
		if *v == 0 {
			*v = n
		}
	}
	def(&d.MaxFixesPerHour, DefaultMaxFixesPerHour)
	def(&d.MaxFixesPerAccountPerHour, DefaultMaxFixesPerAccountPerHour)
	def(&d.PauseAfterFailures, DefaultPauseAfterFailures)
	return d
}

// daemonError is a problem with a field of the daemon: section; Key is its path below
// daemon: ("schedules.aws"), for its line.
type daemonError struct{ Key, Msg string }

func (e *daemonError) Error() string { return e.Msg }

// check fills in the defaults and checks the section, returning every problem.
func (d *Daemon) check() []*daemonError {
	*d = d.WithDefaults()
	var errs []*daemonError
	add := func(key, msg string) { errs = append(errs, &daemonError{key, msg}) }
	for _, k := range sortedKeys(d.Schedules) {
		if !slices.Contains(TargetKinds, k) {
			msg := fmt.Sprintf("daemon.schedules.%s: not a kind of target (want aws, gcp or tls)", k)
			if s := suggest.Closest(k, TargetKinds); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			add("schedules."+k, msg)
			continue
		}
		if _, err := ParseSchedule(d.Schedules[k]); err != nil {
			add("schedules."+k, fmt.Sprintf("daemon.schedules.%s: %v", k, err))
		}
	}
	if d.FullEvery < 0 {
		add("full_every", "daemon.full_every must not be negative")
	}
	if d.DeniedWindow < 0 {
		add("denied_window", "daemon.denied_window must not be negative")
	}
	if d.SweepSpread != nil && !(*d.SweepSpread >= 0 && *d.SweepSpread <= 1) {
		add("sweep_spread", fmt.Sprintf("daemon.sweep_spread %v: want a share of the schedule's period between 0 and 1 (0.5: over half of it; 0: all at once)", *d.SweepSpread))
	}
	if d.Readers < 0 {
		add("readers", fmt.Sprintf("daemon.readers %d: want a number of collections run at once (0: the default, 256)", d.Readers))
	}
	if d.FullReads < 0 {
		add("full_reads", fmt.Sprintf("daemon.full_reads %d: want a number of scopes read in full at once (0: the default, 16)", d.FullReads))
	}
	if d.MemoryLimit != "" && d.MemoryLimit != MemoryLimitOff {
		if n, err := bytesize.Parse(d.MemoryLimit); err != nil {
			add("memory_limit", fmt.Sprintf("daemon.memory_limit: %v, or off", err))
		} else if n < MinMemoryLimit {
			add("memory_limit", fmt.Sprintf("daemon.memory_limit %s: below %d MiB the collector would run all the time (want e.g. 900MiB, or off)", d.MemoryLimit, MinMemoryLimit>>20))
		}
	}
	if d.JobTimeout < 0 {
		add("job_timeout", "daemon.job_timeout must not be negative")
	} else if d.RescueAfter <= d.JobTimeout {
		add("rescue_after", fmt.Sprintf("daemon.rescue_after (%v) must exceed daemon.job_timeout (%v): a job still running would be run twice at once", d.RescueAfter, d.JobTimeout))
	}
	if d.TraceSampleRatio != nil && !(*d.TraceSampleRatio >= 0 && *d.TraceSampleRatio <= 1) {
		add("trace_sample_ratio", fmt.Sprintf("daemon.trace_sample_ratio %v: want a share between 0 and 1 (0.1: one trace in ten)", *d.TraceSampleRatio))
	}
	if d.OTLPEndpoint != "" {
		if err := checkOTLPEndpoint(d.OTLPEndpoint); err != nil {
			add("otlp_endpoint", "daemon.otlp_endpoint "+err.Error())
		}
	}
	return errs
}

// checkOTLPEndpoint checks an OTLP/HTTP base URL. What it says never holds the URL's
// password.
func checkOTLPEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL, which may hold a password
		}
		return fmt.Errorf("is not a URL: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q: want an http:// or https:// URL: traces go over OTLP/HTTP (e.g. http://otel-collector:4318)", u.Redacted())
	case u.Host == "":
		return fmt.Errorf("%q: no host", u.Redacted())
	case u.User != nil:
		return fmt.Errorf("%q: no user or password in the URL: put the collector's credentials in $OTEL_EXPORTER_OTLP_HEADERS", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q: a query or fragment has no place in it", u.Redacted())
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
