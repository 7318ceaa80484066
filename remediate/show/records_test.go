package show_test

import (
	"strings"
	"testing"
	"time"

	"github.com/warden-sec/warden/findings"
	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/remediate/show"
)

func request(state gates.State, votes ...gates.Vote) gates.Request {
	r := gates.Request{ID: "apr-1", Remediator: "aws.ec2.revoke_ingress", Target: "sg-\x1b[2J1", Part: "rule-1", Risk: findings.RiskMedium,
		Requester: "alice", Quorum: 2, State: state, ExpiresAt: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)}
	for i, v := range votes {
		r.Decisions = append(r.Decisions, gates.Decision{Actor: []string{"bob", "carol"}[i], Vote: v})
	}
	return r
}

func TestRequests_escapesAndShowsTheStateOnlyWithAll(t *testing.T) {
	var b strings.Builder
	if err := show.Requests(&b, []gates.Request{request(gates.StatePending, gates.VoteApprove)}, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "\x1b") || !strings.Contains(out, `sg-\x1b[2J1`) {
		t.Errorf("the target is not escaped:\n%s", out)
	}
	if !strings.Contains(out, "bob approved") || !strings.Contains(out, "1/2") || strings.Contains(out, "STATE") {
		t.Errorf("want bob's approval, 1/2 and no STATE column:\n%s", out)
	}
	b.Reset()
	show.Requests(&b, nil, true)
	if b.String() != "no approval requests\n" {
		t.Errorf("an empty --all list: %q", b.String())
	}
}

func TestDecisions(t *testing.T) {
	if got := show.Decisions(request(gates.StatePending)); got != "-" {
		t.Errorf("no decisions: %q, want -", got)
	}
	if got, want := show.Decisions(request(gates.StateDenied, gates.VoteApprove, gates.VoteDeny)), "bob approved, carol denied"; got != want {
		t.Errorf("Decisions = %q, want %q", got, want)
	}
}

func TestDecided_saysWhereTheRequestStands(t *testing.T) {
	for _, tc := range []struct {
		r    gates.Request
		want string
	}{
		{request(gates.StatePending, gates.VoteApprove), "approval of request apr-1 recorded (1 of 2 approvals): it waits for 1 more before 2026-12-06T12:00:00Z\n"},
		{request(gates.StateApproved, gates.VoteApprove, gates.VoteApprove), "runs on the next warden apply --confirm"},
		{request(gates.StateApproved, gates.VoteApprove, gates.VoteApprove), "warden serve (replica r-1) applies it within seconds"},
		{request(gates.StateDenied, gates.VoteDeny), `request apr-1 denied: aws.ec2.revoke_ingress on sg-\x1b[2J1 will not run`},
	} {
		var b strings.Builder
		applier := ""
		if strings.Contains(tc.want, "warden serve") {
			applier = "r-1"
		}
		show.Decided(&b, tc.r, applier)
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%s: %q, want %q in it", tc.r.State, b.String(), tc.want)
		}
	}
}
