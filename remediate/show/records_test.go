package show_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

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
	if err := show.Requests(&b, []gates.Request{request(gates.StatePending, gates.VoteApprove)}, false, 0); err != nil {
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
	show.Requests(&b, nil, true, 100)
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

// `warden approvals list` fits the terminal (100 columns off a terminal): long targets
// keep their end, where the resource is named, long parts both ends; --wide (width 0)
// prints every cell whole; a table that fits is printed as it is.
func TestRequests_fitsTheWidth(t *testing.T) {
	long := gates.Request{ID: "apr-0123456789ab", Remediator: "aws.iam.detach_policy_from_role",
		Target: "arn:aws:iam::111122223333:role/service-role/eu-west-1/very-long-path/of/nested/teams/deploy-pipeline-prod",
		Part:   "arn:aws:iam::aws:policy/AdministratorAccess-" + strings.Repeat("x", 120) + "-tail",
		Risk:   findings.RiskCritical, Requester: "warden-demo", Quorum: 2, State: gates.StatePending,
		ExpiresAt: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC),
		Decisions: []gates.Decision{{Actor: "alice", Vote: gates.VoteApprove}}}
	short := request(gates.StatePending)
	short.Target = "sg-1"
	for _, tc := range []struct {
		name      string
		reqs      []gates.Request
		withState bool
		width     int
		want      []string
		absent    []string
	}{
		{"wide: every cell whole", []gates.Request{long}, false, 0, []string{long.Target, long.Part, "2026-12-06T12:00:00Z", "alice approved"}, nil},
		{"100 columns", []gates.Request{long}, false, 100, []string{"…", "very-long-path/of/nested/teams/deploy-pipeline-prod", "-tail", "part arn:aws:iam::", "1/2 alice approved", "12-06 12:00Z", "aws.iam.", "_from_role"}, []string{long.Target, long.Part}},
		{"80 columns, with states", []gates.Request{long, short}, true, 80, []string{"/teams/deploy-pipeline-prod", "pending", "STATE", "sg-1  part rule-1"}, []string{long.Target}},
		{"200 columns", []gates.Request{long}, false, 200, []string{long.Target, "alice approved"}, []string{long.Part}},
		{"a table that fits is whole", []gates.Request{short}, false, 120, []string{"DECISIONS", "QUORUM", "2026-12-06T12:00:00Z"}, []string{"…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := show.Requests(&b, tc.reqs, tc.withState, tc.width); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if n := utf8.RuneCountInString(line); tc.width > 0 && n > tc.width {
					t.Errorf("a line of %d columns, over %d: %q", n, tc.width, line)
				}
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the table lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.absent {
				if strings.Contains(out, w) {
					t.Errorf("the table holds %q whole:\n%s", w, out)
				}
			}
		})
	}
	// Off a terminal, and without --wide, a table fits DefaultWidth.
	if got := show.TableWidth(&strings.Builder{}, false); got != show.DefaultWidth {
		t.Errorf("TableWidth off a terminal = %d, want %d", got, show.DefaultWidth)
	}
	if got := show.TableWidth(&strings.Builder{}, true); got != 0 {
		t.Errorf("TableWidth --wide = %d, want 0", got)
	}
}
