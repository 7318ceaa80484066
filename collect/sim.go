package collect

import (
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/warden-sec/warden/internal/cloudsim"
)

// Simulator is an in-process cloud simulator serving one world file on a loopback port,
// for demos (`warden scan --sim world.yaml`): the collectors read it through the real
// SDK clients, as they would read the cloud.
type Simulator struct {
	world *cloudsim.World
	sim   *cloudsim.Sim
	srv   *cloudsim.Server
	// URL is the simulator's endpoint for both clouds, http://127.0.0.1:PORT.
	URL string
}

// StartSimulator loads a world file and serves it on a free loopback port until Close.
func StartSimulator(worldFile string, log *slog.Logger) (*Simulator, error) {
	return StartSimulatorAt(worldFile, time.Time{}, log)
}

// StartSimulatorAt is StartSimulator with the simulator's clock starting at at and running
// from there (zero: the machine's clock). What the clouds report as of their own time
// (IAM's last-accessed data, whose window ends when it is read) then reads the same on
// any day, as a scan --now judges ages the same.
func StartSimulatorAt(worldFile string, at time.Time, log *slog.Logger) (*Simulator, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := cloudsim.LoadWorld(worldFile)
	if err != nil {
		return nil, err
	}
	return serveWorld(w, worldFile, at, log)
}

// StartSimulatorFrom serves a world given as the bytes of a world file; name says where
// they come from, in errors and logs.
func StartSimulatorFrom(world []byte, name string, log *slog.Logger) (*Simulator, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w, err := cloudsim.ParseWorld(world)
	if err != nil {
		return nil, fmt.Errorf("read world %s: %w", name, err)
	}
	return serveWorld(w, name, time.Time{}, log)
}

func serveWorld(w *cloudsim.World, name string, at time.Time, log *slog.Logger) (*Simulator, error) {
	opts := cloudsim.Options{Logger: log}
	if !at.IsZero() {
		start := time.Now()
		opts.Now = func() time.Time { return at.Add(time.Since(start)) }
	}
	sim, err := cloudsim.New(w, opts)
	if err != nil {
		return nil, fmt.Errorf("simulator world %s: %w", name, err)
	}
	srv, err := sim.Listen("127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	log.Info("simulator serving", "world", name, "endpoint", srv.URL)
	return &Simulator{world: w, sim: sim, srv: srv, URL: srv.URL}, nil
}

// World writes the simulated clouds as they are now (after whatever fixes were applied)
// as a world file, which StartSimulator serves again: a demo's cloud outlives its process.
func (s *Simulator) World() ([]byte, error) {
	var (
		b   []byte
		err error
	)
	s.sim.Do(func(w *cloudsim.World) { b, err = w.Marshal() })
	if err != nil {
		return nil, fmt.Errorf("write the simulated world: %w", err)
	}
	return b, nil
}

// Target points the targets' clouds at the simulator. With no AWS or GCP target named,
// the demo reads everything the world holds: every account (the organisation when it
// has one) and every project, with what each principal used of its grants (IAM's
// last-accessed data), the IAM recommender's recommendations and the Policy Analyzer's
// last authentications. TLS targets are left as
// they are.
func (s *Simulator) Target(t Targets) Targets {
	if t.AWS == nil && t.GCP == nil {
		if len(s.world.AWS.Accounts) > 0 {
			t.AWS = &AWS{Org: s.world.AWS.Organization != nil}
			t.AWS.Usage.Enabled = true
		}
		if len(s.world.GCP.Projects) > 0 {
			t.GCP = &GCP{Recommendations: true, Activity: true}
			for _, p := range s.world.GCP.Projects {
				t.GCP.Projects = append(t.GCP.Projects, p.ID)
			}
		}
	}
	if t.AWS != nil {
		a := *t.AWS
		a.Endpoint = s.URL
		// A simulator is no shared service to spare: unless the world throttles IAM or the
		// targets pace it, IAM is not paced, as reading what each principal used (three
		// calls a principal) would otherwise take most of a demo's time.
		if _, throttled := s.world.RateLimits["iam"]; !throttled {
			if _, paced := a.RateLimits["iam"]; !paced {
				a.RateLimits = maps.Clone(a.RateLimits)
				if a.RateLimits == nil {
					a.RateLimits = map[string]float64{}
				}
				a.RateLimits["iam"] = 0
			}
		}
		t.AWS = &a
		// The simulator accepts any key; a fixed one keeps the user's own credentials,
		// if any, away from it.
		t.AWSConfig = &aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("AKIASIMULATOR", "simulator", "")}
	}
	if t.GCP != nil {
		g := *t.GCP
		g.Endpoint = s.URL
		t.GCP = &g
	}
	return t
}

// Close stops the simulator.
func (s *Simulator) Close() error { return s.srv.Close() }
