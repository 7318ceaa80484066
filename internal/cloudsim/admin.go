package cloudsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The admin API (/_sim/…) lets a process that did not start the simulator (a test driving
// `warden sim` as a child process, a demo script) read its counters and change its faults
// while it serves:
//
//	GET  /_sim/health          "ok"
//	GET  /_sim/calls           the call counters, by "service:Operation" (CallStats)
//	GET  /_sim/calls/places    the served calls, by "service:Operation account region"
//	                           (CallsByPlace)
//	GET  /_sim/writes          the write calls only, by "service:Operation" (Writes)
//	POST /_sim/calls/reset     zero the counters
//	POST /_sim/latency         body "250ms": the latency added to every call (SetLatency)
//	POST /_sim/clock           body "2400h": move the clock forward (Advance); answers the new time
//	POST /_sim/faults          body in YAML or JSON, {faults: [...], rate_limits: {...}}:
//	                           replaces the faults and limits (SetFaults)
//	GET  /_sim/gcp/usage       when GCP members last exercised each permission, by project
//	                           and member (gcp_usage.go)
//	POST /_sim/drift           body "0.01" or empty (the world's drift_rate): a drift epoch
//	                           changing that share of the generated accounts' resources
//	                           (Drift, gen_drift.go); answers {"epoch": N}
//	GET  /_sim/securityhub/findings  the Security Hub findings stored, as ASFF documents
//	                           (?account=…&region=… narrow them; SecurityHubFindings)
//	GET  /_sim/scc/findings    the Security Command Center findings stored, as JSON
//	                           (?source=organizations/O/sources/S narrows them; SCCFindings)
//	GET  /_sim/generated       the caches of generated accounts and projects: held, built,
//	                           dropped, overlays ({"aws": GeneratedStats, "gcp": …})
//
// Writes answer 204; a bad body answers 400 with the reason.

// adminFaults is the body of POST /_sim/faults.
type adminFaults struct {
	Faults     []Fault            `yaml:"faults"`
	RateLimits map[string]float64 `yaml:"rate_limits"`
}

func (s *Sim) serveAdmin(w http.ResponseWriter, r *http.Request) {
	route := r.Method + " " + r.URL.Path
	switch route {
	case "GET /_sim/health":
		fmt.Fprintln(w, "ok")
	case "GET /_sim/calls":
		writeAdminJSON(w, s.Calls())
	case "GET /_sim/calls/places":
		writeAdminJSON(w, s.CallsByPlace())
	case "GET /_sim/writes":
		writeAdminJSON(w, s.Writes())
	case "POST /_sim/calls/reset":
		s.ResetCalls()
		w.WriteHeader(http.StatusNoContent)
	case "POST /_sim/latency":
		if d, ok := durationBody(w, r, "latency: want a duration such as 250ms"); ok {
			s.SetLatency(d)
			w.WriteHeader(http.StatusNoContent)
		}
	case "POST /_sim/clock":
		if d, ok := durationBody(w, r, "clock: want a duration to move the clock forward by, such as 2400h"); ok {
			s.Advance(d)
			fmt.Fprintln(w, s.now().UTC().Format(time.RFC3339))
		}
	case "GET /_sim/generated":
		writeAdminJSON(w, map[string]GeneratedStats{"aws": s.GeneratedStats(), "gcp": s.GeneratedProjectStats()})
	case "POST /_sim/drift":
		s.serveDrift(w, r)
	case "GET /_sim/securityhub/findings":
		s.serveSecurityHubAdmin(w, r)
	case "GET /_sim/scc/findings":
		s.serveSCCAdmin(w, r)
	case "GET /_sim/gcp/usage":
		writeAdminJSON(w, s.GCPUsage())
	case "POST /_sim/faults":
		b, err := readBody(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in adminFaults
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		if err := dec.Decode(&in); err != nil && len(bytes.TrimSpace(b)) > 0 {
			http.Error(w, "faults: "+strings.TrimPrefix(err.Error(), "yaml: "), http.StatusBadRequest)
			return
		}
		if err := s.SetFaults(in.Faults, in.RateLimits); err != nil {
			http.Error(w, "faults: "+err.Error(), http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func writeAdminJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// durationBody reads a request body holding a duration of zero or more; otherwise it
// answers 400 with want and what it got, and reports false.
func durationBody(w http.ResponseWriter, r *http.Request, want string) (time.Duration, bool) {
	b, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return 0, false
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil || d < 0 {
		http.Error(w, fmt.Sprintf("%s, got %q", want, b), http.StatusBadRequest)
		return 0, false
	}
	return d, true
}

// serveDrift answers POST /_sim/drift: a body holding the rate, or none for the world's.
func (s *Sim) serveDrift(w http.ResponseWriter, r *http.Request) {
	b, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rate := 0.0
	if t := strings.TrimSpace(string(b)); t != "" {
		if rate, err = strconv.ParseFloat(t, 64); err != nil {
			http.Error(w, fmt.Sprintf("drift: want a share such as 0.01, got %q", t), http.StatusBadRequest)
			return
		}
	}
	epoch, err := s.Drift(rate)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	writeAdminJSON(w, map[string]int{"epoch": epoch})
}
