package collect

import (
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/warden-sec/warden/collectors"
	"github.com/warden-sec/warden/internal/progress"
)

// Overrides are the targets a command line names (--aws, --region, --gcp-project,
// --tls, …), laid over the config's targets: section by Targets.With.
type Overrides struct {
	TLS         []string
	TLSTimeout  time.Duration
	AWS         bool
	AWSOrg      bool
	AWSOrgRole  string
	Regions     []string
	GCPProjects []string
	GCPEndpoint string
	// AWSUsage turns on the AWS collector's usage reading (targets.aws.usage.enabled).
	AWSUsage bool
}

// With lays o over t, leaving t as it was. Any AWS override makes AWS a target; Regions
// replace t's regions, GCPProjects and TLS add to t's, an endpoint or org role given wins.
func (t Targets) With(o Overrides) Targets {
	t.TLS = slices.Concat(t.TLS, o.TLS)
	t.TLSTimeout = o.TLSTimeout
	if o.AWS || o.AWSOrg || o.AWSOrgRole != "" || len(o.Regions) > 0 || o.AWSUsage {
		var a AWS
		if t.AWS != nil {
			a = *t.AWS
		}
		a.Org = a.Org || o.AWSOrg
		if o.AWSOrgRole != "" {
			a.OrgRole = o.AWSOrgRole
		}
		if len(o.Regions) > 0 {
			a.Regions = o.Regions
		}
		a.Usage.Enabled = a.Usage.Enabled || o.AWSUsage
		t.AWS = &a
	}
	if len(o.GCPProjects) > 0 || o.GCPEndpoint != "" {
		var g GCP
		if t.GCP != nil {
			g = *t.GCP
		}
		g.Projects = slices.Concat(g.Projects, o.GCPProjects)
		if o.GCPEndpoint != "" {
			g.Endpoint = o.GCPEndpoint
		}
		t.GCP = &g
	}
	return t
}

// ResolveSim resolves the targets into collectors (Resolve), behind an in-process
// simulator serving the world file sim when sim is set, its clock starting at at (zero:
// the machine's clock; see StartSimulatorAt); stop ends the simulator once the run is
// over. Empty targets are ErrNoTargets, for the command to say which flags it wants.
func ResolveSim(t Targets, sim string, at time.Time, log *slog.Logger) (cs []collectors.Collector, stop func(), err error) {
	stop = func() {}
	if sim != "" {
		s, err := StartSimulatorAt(sim, at, log)
		if err != nil {
			return nil, nil, err
		}
		stop = func() { _ = s.Close() }
		t = s.Target(t)
	}
	if cs, err = Resolve(t, log); err != nil {
		stop()
		return nil, nil, err
	}
	return cs, stop, nil
}

// Reporting are the options of a collection by source ("warden v1.2.0 collect") that
// draws prog (nil: none) and says what it read when it is over: on the terminal under
// the progress line, else in log.
func Reporting(source string, prog *progress.Line, log *slog.Logger) Options {
	opts := Options{
		Source: source,
		Done: func(sum Summary) {
			prog.Done()
			if prog != nil {
				fmt.Fprintln(prog.Writer(), sum)
			} else {
				log.Info(sum.String())
			}
		},
	}
	if prog != nil {
		opts.Progress = prog.UpdateWith
	}
	return opts
}
