package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/remediate/remediatetest"
)

// TestServe_daemonConvergesAndReports drives the binary as operators do: `warden serve
// --schedule` sweeps the simulated account on start, closes the SSH rules (a medium,
// auto-approved risk) through the same machine as apply, and leaves the critical fix
// waiting; POST /v1/reconcile wants the bearer token; /metrics counts what was done;
// `warden status` shows every scope read and the pending approval; SIGTERM exits 0.
func TestServe_daemonConvergesAndReports(t *testing.T) {
	const groups = 2
	w := remediatetest.World(groups)
	cr := startChildRun(t, w, "gates:\n  auto: [low, medium]\n")
	const token = "serve-test-token-0123456789abcdef0123456789"
	s := startServeEnv(t, cr.url, cr.args("serve", "--listen", "127.0.0.1:0", "--schedule", "@every 1h", "--log-level", "info"), "WARDEN_EVENTS_TOKEN="+token)
	for i := range groups {
		arn := "arn:aws:ec2:us-east-1:" + remediatetest.Account + ":security-group/sg-00000000000000a" + string(rune('0'+i))
		waitFor(t, "SSH closed on "+arn, func() (string, bool) {
			open, problem := sshOpen(cr, arn)
			return problem, !open && problem == ""
		})
	}
	for _, c := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer nope-nope-nope-nope-nope-nope-nope", http.StatusUnauthorized}, {"Bearer " + token, http.StatusAccepted}} {
		req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/reconcile", strings.NewReader(`{"target": "aws"}`))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("POST /v1/reconcile with %q: %d, want %d", c.auth, resp.StatusCode, c.want)
		}
	}
	metrics := waitFor(t, "the metrics to count two sweeps and both fixes", func() (string, bool) {
		resp, err := http.Get(s.url + "/metrics")
		if err != nil {
			return err.Error(), false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b), strings.Contains(string(b), `warden_jobs_total{kind="warden.sweep",outcome="completed"} 2`) &&
			strings.Contains(string(b), `warden_actions_total{outcome="verified",remediator="aws.ec2.revoke_ingress"} 2`)
	})
	wantIn(t, "/metrics", metrics, "process_resident_memory_bytes", "warden_queue_jobs")

	type status struct {
		Leader string
		Scopes []struct{ Scope, Status string }
	}
	st := waitFor(t, "warden status to show the three scopes read", func() (status, bool) {
		out, err := wardenChild(cr.url, "status", "--format", "json", "--db", cr.db).CombinedOutput()
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		var st status
		if err := json.Unmarshal(out, &st); err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		return st, len(st.Scopes) == 3
	})
	if st.Leader == "" {
		t.Errorf("status while serving names no leader: %+v", st)
	}
	// Gauges read from the store at scrape time: every scope read in full, the audit log.
	waitFor(t, "the store's gauges in /metrics", func() (string, bool) {
		resp, err := http.Get(s.url + "/metrics")
		if err != nil {
			return err.Error(), false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		m := string(b)
		return m, strings.Contains(m, `warden_scopes{outcome="ok",provider="aws",service="iam"} 1`) &&
			strings.Contains(m, `warden_scopes{outcome="ok",provider="aws",service="ec2"} 1`) &&
			strings.Contains(m, `warden_findings_open{severity=`) && strings.Contains(m, "warden_audit_entries ")
	})
	for _, sc := range st.Scopes {
		if sc.Status != "ok" {
			t.Errorf("scope %s %s", sc.Scope, sc.Status)
		}
	}
	s.stop(t)
	table, err := wardenChild(cr.url, "status", "--db", cr.db).CombinedOutput()
	if err != nil {
		t.Fatalf("status after the stop: %v\n%s", err, table)
	}
	wantIn(t, "status after the stop", string(table), "aws/"+remediatetest.Account+"/iam", "pending approvals:")
}

// sshOpen reports whether the group still lets the world in on port 22, as the
// simulator holds it.
func sshOpen(cr *childRun, groupARN string) (open bool, problem string) {
	id := groupARN[strings.LastIndex(groupARN, "/")+1:]
	problem = "no group " + id
	cr.sim.Do(func(w *cloudsim.World) {
		for _, g := range w.AWS.Accounts[0].SecurityGroups {
			if g.ID != id {
				continue
			}
			problem = ""
			for _, r := range g.Ingress {
				if r.FromPort == 22 && r.CIDR == "0.0.0.0/0" {
					open = true
				}
			}
		}
	})
	return open, problem
}
