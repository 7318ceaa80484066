package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/warden-sec/warden/remediate"
	"github.com/warden-sec/warden/remediate/remediatetest"
)

// warden serve says what it does with what is approved, and warden approve says who
// applies it: a serve without a target for the action's cloud leaves an approved fix
// alone and warns, naming the flag; approve then says the next apply runs it. A serve
// with the target applies it and logs the fix taken up and verified, and an approval
// made while it runs is answered with the replica that applies it within seconds.
func TestServe_logsWhatItAppliesAndApproveSaysWho(t *testing.T) {
	cr := startChildRun(t, remediatetest.World(2), "gates:\n  approvers: [bob, carol]\n  unchecked_names: true\n")
	p := cr.plan(t)
	out, err := cr.warden("apply", cr.planFile, "--confirm", "--format", "json").Output()
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	var res remediate.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	var ids, reqs []string
	for _, it := range res.Items {
		if it.Remediator == "aws.ec2.revoke_ingress" && it.Request != "" {
			ids, reqs = append(ids, it.Action), append(reqs, it.Request)
		}
	}
	if len(reqs) != 2 {
		t.Fatalf("apply asked %d approvals of SSH rules, want 2: %+v", len(reqs), res.Items)
	}
	approve := func(req string) string {
		t.Helper()
		cmd := wardenChild(cr.url, "approve", req, "--config", cr.cfg, "--db", cr.db)
		cmd.Env = append(cmd.Env, "WARDEN_ACTOR=bob")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bob approves %s: %v\n%s", req, err, out)
		}
		return string(out)
	}
	groupOf := func(id string) string {
		for _, a := range p.Actions {
			if a.ID == id {
				return a.Target
			}
		}
		t.Fatalf("no action %s in the plan", id)
		return ""
	}

	// Without targets: a warning at start; the approval is left alone, and said so.
	bare := startServeEnv(t, cr.url, []string{"serve", "--config", cr.cfg, "--db", cr.db, "--listen", "127.0.0.1:0"})
	waitFor(t, "the warning of a serve without targets", func() (string, bool) {
		o := bare.output()
		return o, strings.Contains(o, "warden serve has no live target") && strings.Contains(o, "cannot apply actions that wait: no AWS target: start warden serve with --aws")
	})
	if said := approve(reqs[0]); !strings.Contains(said, "runs on the next warden apply --confirm") {
		t.Errorf("approve without a serve that can apply: %q", said)
	}
	waitFor(t, "the warning of an approved fix this serve cannot apply", func() (string, bool) {
		o := bare.output()
		return o, strings.Contains(o, "ready, but not applied here: no AWS target") && strings.Contains(o, ids[0])
	})
	if open, problem := sshOpen(cr, groupOf(ids[0])); !open || problem != "" {
		t.Fatalf("a serve without targets touched the group (open %v, %s)", open, problem)
	}
	if st := actionStates(t, cr)[ids[0]]; st != remediate.StateApproved {
		t.Fatalf("the approved action is %s under a serve without targets, want approved", st)
	}
	bare.stop(t)

	// With the target: the approved fix is taken up and verified, and logged.
	s := startServeEnv(t, cr.url, cr.args("serve", "--listen", "127.0.0.1:0"))
	waitFor(t, "the approved fix applied", func() (string, bool) {
		o := s.output()
		return o, strings.Contains(o, `msg="fix taken up" action=`+ids[0]) && strings.Contains(o, `msg="fix applied and verified" action=`+ids[0])
	})
	waitFor(t, "a leader on the queue", func() (string, bool) {
		out, _ := wardenChild(cr.url, "status", "--format", "json", "--db", cr.db).Output()
		var st struct{ Leader string }
		_ = json.Unmarshal(out, &st)
		return st.Leader, st.Leader != ""
	})
	if said := approve(reqs[1]); !strings.Contains(said, "warden serve (replica ") || !strings.Contains(said, "applies it within seconds") {
		t.Errorf("approve while a serve runs: %q", said)
	}
	waitFor(t, "the second approved fix applied", func() (string, bool) {
		o := s.output()
		return o, strings.Contains(o, `msg="fix applied and verified" action=`+ids[1])
	})
	for _, id := range ids {
		if open, problem := sshOpen(cr, groupOf(id)); open || problem != "" {
			t.Errorf("%s verified, yet the simulator has the group open (%s)", id, problem)
		}
	}
	s.stop(t)
}

// actionStates lists the run's actions by id, through warden actions list.
func actionStates(t *testing.T, cr *childRun) map[string]remediate.State {
	t.Helper()
	out, err := wardenChild(cr.url, "actions", "list", "--format", "json", "--db", cr.db).Output()
	if err != nil {
		t.Fatalf("actions list: %v\n%s", err, out)
	}
	var rs []remediate.Record
	if err := json.Unmarshal(out, &rs); err != nil {
		t.Fatalf("actions list: %v\n%s", err, out)
	}
	m := map[string]remediate.State{}
	for _, r := range rs {
		m[r.ID] = r.State
	}
	return m
}
