package slackgate_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/warden-sec/warden/gates"
	"github.com/warden-sec/warden/internal/cloudsim"
	"github.com/warden-sec/warden/slackgate/slackgatetest"
	"github.com/warden-sec/warden/store/storetest"
)

const trustFix = "aws.iam.update_trust_policy"

// TestSlack_criticalQuorumFromRequestToRollback follows a critical fix through Slack: the
// message with everything an approver needs, refusals that leave one decision each, the
// quorum of two, the fix applied, verified and rolled back, each step on the message,
// and the audit log intact.
func TestSlack_criticalQuorumFromRequestToRollback(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			hs := start(t, dsn(t))
			id, actionID := hs.request(trustFix)
			hs.sync()
			posts := hs.ws.Posts()
			if len(posts) != 1 {
				t.Fatalf("%d messages posted, want 1", len(posts))
			}
			m := posts[0]
			if m.Channel != channel {
				t.Errorf("posted to %s, want %s", m.Channel, channel)
			}
			rec, err := hs.machine.Action(ctx, actionID)
			if err != nil || rec == nil {
				t.Fatalf("action %s: %v", actionID, err)
			}
			first := slackgatetest.Text(m.Versions[0])
			wantContains(t, "the request's message", first,
				"Approval needed: aws.iam.update_trust_policy (critical risk)",
				"WARDEN-AWS-IAM-005", "can be assumed by anyone", // finding and policy
				"trust/*", `"Principal":"*"`, "after: *rewritten to the fixed value*", // the change, before → after
				"arn:aws:iam::111111111111:role/deploy", // target
				"111111111111 / global",                 // account and region
				"*Risk*\ncritical",
				"2 distinct approvers, never the requester (alice (<@"+uAlice+">))",
				"waiting for approval: 0 of 2; 2 more needed",
				hs.get(id).ExpiresAt.UTC().Format("2006-01-02 15:04"), // expiry
				rec.Hash[:12], actionID, id) // the action's short hash
			if strings.Contains(first, "&quot;") {
				t.Errorf("the before-state is over-escaped:\n%s", first)
			}
			bs := slackgatetest.Buttons(m.Versions[0])
			ap, dn := bs["warden_approve"], bs["warden_deny"]
			if ap == nil || dn == nil || ap.Value != id || dn.Value != id {
				t.Fatalf("want Approve and Deny buttons carrying %s, got %+v", id, bs)
			}
			if ap.Confirm == nil || dn.Confirm == nil || ap.Style != slack.StylePrimary || dn.Style != slack.StyleDanger {
				t.Errorf("both buttons ask for confirmation: approve %+v, deny %+v", ap.Confirm, dn.Confirm)
			}
			if !slackgatetest.HasReasonInput(m.Versions[0]) {
				t.Error("no reason box for a deny")
			}

			// Sync again: nothing changed, nothing is sent.
			hs.sync()
			hs.sync()
			if p, u := hs.ws.Calls("chat.postMessage"), hs.ws.Calls("chat.update"); p != 1 || u != 0 {
				t.Fatalf("idle syncs: %d posts, %d updates; want 1, 0", p, u)
			}

			// bob (slack.approvers) approves: 1 of 2.
			if code := hs.click(uBob, "warden_approve", id, ""); code != http.StatusOK {
				t.Fatalf("bob's click: %d", code)
			}
			if r := hs.get(id); len(r.Decisions) != 1 || r.Decisions[0].Actor != "slack:"+uBob || r.Decisions[0].Channel != gates.ChannelSlack {
				t.Fatalf("after bob: %+v", r.Decisions)
			}
			wantContains(t, "bob's reply", strings.Join(hs.ws.Replies(uBob), "\n"), "you approved request "+id+" (1 of 2); 1 more needed")
			wantContains(t, "the message after bob", last(hs.messageOf(id)), "waiting for approval: 1 of 2 (approved by <@"+uBob+">); 1 more needed")

			// Refusals: each is told why, and bob's one decision stays the only one.
			refusals := []struct {
				name, user, action, reason, want string
			}{
				{"a second click", uBob, "warden_approve", "", "cannot approve request " + id + ": already decided (slack:" + uBob + " approved it at "},
				{"the requester's own Slack user", uAlice, "warden_approve", "", "the requester of an action cannot decide"},
				{"a non-approver", uMallory, "warden_approve", "", "not an approver"},
				{"a deny without a reason", uDave, "warden_deny", "", "a deny needs a reason"},
			}
			for _, c := range refusals {
				before := len(hs.ws.Replies(c.user))
				if code := hs.click(c.user, c.action, id, c.reason); code != http.StatusOK {
					t.Fatalf("%s: %d", c.name, code)
				}
				if r := hs.get(id); len(r.Decisions) != 1 || r.State != gates.StatePending {
					t.Fatalf("%s: decisions %+v, state %s; want bob's only, pending", c.name, r.Decisions, r.State)
				}
				got := hs.ws.Replies(c.user)
				if len(got) != before+1 || !strings.Contains(got[len(got)-1], c.want) {
					t.Errorf("%s: replies %q, want one more saying %q", c.name, got, c.want)
				}
			}
			if s := hs.h.Stats(); s.Refusals != 4 || s.Decisions != 1 || s.Rejected() != 0 {
				t.Errorf("stats %+v: want 4 refusals, 1 decision", s)
			}

			// carol (gates.approvers, through identities) completes the quorum, a minute later.
			hs.advance(time.Minute)
			hs.click(uCarol, "warden_approve", id, "")
			r := hs.get(id)
			if r.State != gates.StateApproved || len(r.Decisions) != 2 || r.Decisions[1].Actor != "carol" {
				t.Fatalf("after carol: %s %+v", r.State, r.Decisions)
			}
			wantContains(t, "carol's reply", strings.Join(hs.ws.Replies(uCarol), "\n"), "you approved request "+id+"; it has the approvals it needs (2 of 2) and will be applied.")
			for _, u := range []string{uBob, uCarol, uAlice, uMallory, uDave} {
				for _, reply := range hs.ws.Replies(u) {
					if strings.Contains(reply, "request "+id+": approve request") || strings.Contains(reply, "its 2 approvals") {
						t.Errorf("a reply says a thing twice: %q", reply)
					}
				}
			}
			if got := hs.onDecision(); !slices.Equal(got, []string{id, id}) {
				t.Errorf("OnDecision calls %v, want %s twice", got, id)
			}
			msg := last(hs.messageOf(id))
			wantContains(t, "the approved message", msg, "approved by <@"+uBob+">, carol (<@"+uCarol+">) (2 of 2); waiting to be applied")
			if len(slackgatetest.Buttons(hs.messageOf(id).Versions[len(hs.messageOf(id).Versions)-1])) != 0 {
				t.Error("an approved request's message still has buttons")
			}

			// warden serve's worker applies it: applied and verified.
			if _, err := hs.machine.ApplyDue(ctx); err != nil {
				t.Fatal(err)
			}
			hs.sync()
			wantContains(t, "the applied message", last(hs.messageOf(id)), "Fixed: aws.iam.update_trust_policy", "applied and verified")

			// Rolled back from the CLI: the message says so, and is settled.
			if _, err := hs.machine.Rollback(ctx, actionID); err != nil {
				t.Fatal(err)
			}
			hs.sync()
			wantContains(t, "the rolled-back message", last(hs.messageOf(id)), "rolled back")
			if m, ok, err := hs.n.Message(ctx, id); err != nil || !ok || !m.Settled {
				t.Errorf("the rolled-back message is not settled: %+v %v %v", m, ok, err)
			}

			// Each step is a version of the one message.
			var steps []string
			for _, v := range hs.messageOf(id).Versions {
				steps = append(steps, v.Text)
			}
			if len(steps) != 5 {
				t.Errorf("message versions:\n%s\nwant 5: posted, 1 of 2, approved, verified, rolled back", strings.Join(steps, "\n"))
			}

			// A restart posts nothing again.
			n2, _ := hs.channel(t)
			if err := n2.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if p := hs.ws.Calls("chat.postMessage"); p != 1 {
				t.Errorf("%d posts after a restart, want 1", p)
			}
			hs.e.VerifyAudit(t)
		})
	}
}

// TestHandler_refusesUnsignedForgedAndStale: 401, counted, no decision, no reply.
func TestHandler_refusesUnsignedForgedAndStale(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			hs := start(t, dsn(t))
			id, _ := hs.request(trustFix)
			hs.sync()
			body := payload(uBob, "warden_approve", id, "", "")
			bad := slackgatetest.Sign(signingSecret, body, time.Now())
			bad.Set("X-Slack-Signature", "v0=zz")
			cases := []struct {
				name   string
				header http.Header
				body   string
			}{
				{"unsigned", http.Header{}, body},
				{"no timestamp", func() http.Header {
					h := slackgatetest.Sign(signingSecret, body, time.Now())
					h.Del("X-Slack-Request-Timestamp")
					return h
				}(), body},
				{"forged: the wrong secret", slackgatetest.Sign("0000000000000000wrongsecret00000", body, time.Now()), body},
				{"forged: the body changed after signing", slackgatetest.Sign(signingSecret, body, time.Now()), payload(uBob, "warden_approve", id, "", "x")},
				{"forged: not hex", bad, body},
				{"stale: signed 6 minutes ago", slackgatetest.Sign(signingSecret, body, time.Now().Add(-6*time.Minute)), body},
				{"stale: 6 minutes ahead", slackgatetest.Sign(signingSecret, body, time.Now().Add(6*time.Minute)), body},
			}
			for _, c := range cases {
				if code := hs.send(c.body, c.header); code != http.StatusUnauthorized {
					t.Errorf("%s: %d, want 401", c.name, code)
				}
			}
			s := hs.h.Stats()
			if s.Unsigned != 2 || s.Forged != 3 || s.Stale != 2 || s.Decisions != 0 {
				t.Errorf("stats %+v: want 2 unsigned, 3 forged, 2 stale, no decision", s)
			}
			if r := hs.get(id); len(r.Decisions) != 0 || r.State != gates.StatePending {
				t.Errorf("a refused request decided: %+v", r)
			}
			if got := hs.ws.Replies(uBob); len(got) != 0 {
				t.Errorf("replies to refused requests: %q", got)
			}
			// The same body, signed: accepted.
			if code := hs.send(body, slackgatetest.Sign(signingSecret, body, time.Now())); code != http.StatusOK {
				t.Fatalf("signed: %d", code)
			}
			if r := hs.get(id); len(r.Decisions) != 1 {
				t.Errorf("signed click: %+v", r.Decisions)
			}
			// Signed, but not an interaction: 400; another app's button: ignored.
			junk := "payload=%7Bnot+json"
			if code := hs.send(junk, slackgatetest.Sign(signingSecret, junk, time.Now())); code != http.StatusBadRequest {
				t.Errorf("signed junk: %d, want 400", code)
			}
			other := strings.Replace(payload(uBob, "someone_elses_button", id, "", ""), "someone_elses_button", "other", 1)
			if code := hs.send(other, slackgatetest.Sign(signingSecret, other, time.Now())); code != http.StatusOK || hs.h.Stats().Ignored != 1 {
				t.Errorf("another button: %d, stats %+v", code, hs.h.Stats())
			}
		})
	}
}

// TestHandler_groupMemberDeniesWithReason: a member of the approver group denies with the
// reason typed in the box; the message shows who and why, and no longer takes clicks.
func TestHandler_groupMemberDeniesWithReason(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			hs := start(t, dsn(t))
			id, _ := hs.request(trustFix)
			hs.sync()
			hs.click(uDave, "warden_deny", id, "the deploy role is assumed by our CI <through> OIDC")
			r := hs.get(id)
			if r.State != gates.StateDenied || len(r.Decisions) != 1 || r.Decisions[0].Actor != "slack:"+uDave {
				t.Fatalf("after dave's deny: %s %+v", r.State, r.Decisions)
			}
			m := hs.messageOf(id)
			v := m.Versions[len(m.Versions)-1]
			wantContains(t, "the denied message", slackgatetest.Text(v), "Denied", "denied by <@"+uDave+">", "our CI &lt;through&gt; OIDC")
			if len(slackgatetest.Buttons(v)) != 0 || slackgatetest.HasReasonInput(v) {
				t.Error("a denied request's message still takes clicks")
			}
			hs.click(uBob, "warden_approve", id, "")
			if r := hs.get(id); len(r.Decisions) != 1 {
				t.Errorf("an approval after the deny was recorded: %+v", r.Decisions)
			}
			wantContains(t, "bob's reply", strings.Join(hs.ws.Replies(uBob), "\n"), "already decided")
			// One group lookup served both clicks.
			if n := hs.ws.Calls("usergroups.users.list"); n != 1 {
				t.Errorf("usergroups.users.list called %d times, want 1 (cached)", n)
			}
		})
	}
}

// TestSlack_expiredAndVoided: a click after the expiry is refused and the message says
// it expired; a fix whose target changed after its approval is voided, and says so.
func TestSlack_expiredAndVoided(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			hs := start(t, dsn(t))
			id, _ := hs.request("aws.ec2.revoke_ingress")
			hs.sync()
			hs.advance(gates.DefaultExpiry + time.Minute)
			hs.sync()
			wantContains(t, "the message past its expiry", last(hs.messageOf(id)), "Approval expired", "no decision is taken any more")
			hs.click(uBob, "warden_approve", id, "")
			r := hs.get(id)
			if r.State != gates.StateExpired || len(r.Decisions) != 0 {
				t.Fatalf("a click after the expiry: %s %+v", r.State, r.Decisions)
			}
			wantContains(t, "bob's reply", strings.Join(hs.ws.Replies(uBob), "\n"), "the request expired")
			wantContains(t, "the expired message", last(hs.messageOf(id)), "expired at")
			if m, ok, _ := hs.n.Message(ctx, id); !ok || !m.Settled {
				t.Errorf("the expired message is not settled: %+v", m)
			}

			// The critical fix, approved, then the role's trust policy changes.
			tid, _ := hs.request(trustFix)
			hs.sync()
			hs.click(uBob, "warden_approve", tid, "")
			hs.click(uCarol, "warden_approve", tid, "")
			if r := hs.get(tid); r.State != gates.StateApproved {
				t.Fatalf("not approved: %+v", r)
			}
			hs.e.Sim.Do(func(w *cloudsim.World) {
				w.AWS.Accounts[0].Roles[0].AssumeRolePolicy = `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sts:AssumeRole"},{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
			})
			if _, err := hs.machine.ApplyDue(ctx); err != nil {
				t.Fatal(err)
			}
			hs.sync()
			if r := hs.get(tid); r.State != gates.StateVoided {
				t.Fatalf("the drifted fix's request is %s, want voided", r.State)
			}
			wantContains(t, "the voided message", last(hs.messageOf(tid)), "Approval voided", "the target drifted since the plan")
			hs.e.VerifyAudit(t)
		})
	}
}

// TestSlack_failedFix: the message says the fix failed, with why.
func TestSlack_failedFix(t *testing.T) {
	hs := start(t, storetest.Backends(t)["sqlite"](t))
	ctx := context.Background()
	id, _ := hs.request("aws.ec2.revoke_ingress")
	hs.sync()
	hs.click(uBob, "warden_approve", id, "")
	if err := hs.e.Sim.SetFaults([]cloudsim.Fault{{Service: "ec2", Writes: true, AccessDenied: true}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := hs.machine.ApplyDue(ctx); err != nil {
		t.Fatal(err)
	}
	hs.sync()
	wantContains(t, "the failed message", last(hs.messageOf(id)), "Fix failed", ":x: failed: apply:", "Approved by <@"+uBob+"> (1 of 1)")
}

// TestNotifier_respectsRateLimits: a 429 stops sending until Retry-After has passed;
// the error is returned and counted, and nothing is lost.
func TestNotifier_respectsRateLimits(t *testing.T) {
	hs := start(t, storetest.Backends(t)["sqlite"](t))
	ctx := context.Background()
	id, _ := hs.request(trustFix)
	hs.ws.RateLimit("chat.postMessage", 1)
	err := hs.n.Sync(ctx)
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 30*time.Second {
		t.Fatalf("sync under a 429: %v, want a RateLimitedError of 30s", err)
	}
	for range 3 {
		if err := hs.n.Sync(ctx); err != nil {
			t.Fatalf("sync while waiting: %v", err)
		}
	}
	if n := hs.ws.Calls("chat.postMessage"); n != 1 {
		t.Errorf("%d posts tried while rate-limited, want 1", n)
	}
	hs.advance(31 * time.Second)
	hs.sync()
	hs.messageOf(id)
	if s := hs.n.Stats(); s.RateLimited != 1 || s.Deferred != 3 || s.Posted != 1 {
		t.Errorf("stats %+v: want 1 rate-limited, 3 deferred, 1 posted", s)
	}

	// An update hit by a 429 is sent once the wait is over.
	hs.ws.RateLimit("chat.update", 1)
	if _, err := hs.e.Gate.Decide(ctx, id, "carol", "cli", true, ""); err != nil {
		t.Fatal(err)
	}
	if err := hs.n.Sync(ctx); !errors.As(err, &rl) {
		t.Fatalf("sync under a 429: %v", err)
	}
	hs.advance(31 * time.Second)
	hs.sync()
	wantContains(t, "the message after a CLI approval", last(hs.messageOf(id)), "carol (<@"+uCarol+">) via cli", "1 of 2")
}

// TestNotifier_restartUpdatesWhatItPosted: a notifier started anew over the same store
// updates the messages the first one posted, and posts only what is new.
func TestNotifier_restartUpdatesWhatItPosted(t *testing.T) {
	hs := start(t, storetest.Backends(t)["sqlite"](t))
	ctx := context.Background()
	id, _ := hs.request(trustFix)
	hs.sync()
	n2, _ := hs.channel(t)
	if _, err := hs.e.Gate.Decide(ctx, id, "carol", "cli", true, ""); err != nil {
		t.Fatal(err)
	}
	sid, _ := hs.request("aws.ec2.revoke_ingress")
	if err := n2.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(hs.ws.Posts()); got != 2 {
		t.Fatalf("%d messages, want 2", got)
	}
	wantContains(t, "the first message", last(hs.messageOf(id)), "1 of 2 (approved by carol")
	hs.messageOf(sid)
}

// TestSlack_slackErrorsAreReturnedNotFatal: Slack down is an error of Sync, counted,
// quoting no secret; nothing is recorded as posted.
func TestSlack_slackErrorsAreReturnedNotFatal(t *testing.T) {
	hs := start(t, storetest.Backends(t)["sqlite"](t))
	ctx := context.Background()
	hs.request(trustFix)
	hs.ws.Stop()
	err := hs.n.Sync(ctx)
	if err == nil {
		t.Fatal("sync with Slack down: no error")
	}
	if strings.Contains(err.Error(), botToken) || strings.Contains(err.Error(), signingSecret) {
		t.Errorf("the error quotes a secret: %v", err)
	}
	if s := hs.n.Stats(); s.APIErrors != 1 || s.Posted != 0 {
		t.Errorf("stats %+v", s)
	}
	reqs, err := hs.e.Gate.List(ctx, gates.Filter{})
	if err != nil || len(reqs) != 1 {
		t.Fatalf("%v %v", reqs, err)
	}
	if m, ok, err := hs.n.Message(ctx, reqs[0].ID); ok || err != nil {
		t.Errorf("a message recorded although the post failed: %+v %v", m, err)
	}
}

// TestNotifier_twoProcessesPostOnce: two notifiers over one store (two serve processes,
// or Sync and a click's Refresh) syncing at once post each request once.
func TestNotifier_twoProcessesPostOnce(t *testing.T) {
	for name, dsn := range storetest.Backends(t) {
		t.Run(name, func(t *testing.T) {
			hs := start(t, dsn(t))
			id, _ := hs.request(trustFix)
			n2, _ := hs.channel(t)
			errs := make(chan error, 2)
			for _, n := range []interface{ Sync(context.Context) error }{hs.n, n2} {
				go func() { errs <- n.Sync(context.Background()) }()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			hs.messageOf(id)
			if p := hs.ws.Calls("chat.postMessage"); p != 1 {
				t.Errorf("%d posts, want 1", p)
			}
		})
	}
}
