package gates

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/store"
)

// Decide records actor's decision on request id, coming in through channel (cli, slack,
// web): approve, or deny with a reason. It is the only way a decision is made, whatever
// the channel, and runs as one transaction with its audit entry.
//
// Refusals, each wrapped with what was refused (test with errors.Is): ErrSelfApproval
// (the requester never decides), ErrNotApprover, ErrAlreadyDecided (this actor decided
// before, or the request was approved or denied), ErrExpired, ErrVoided,
// ErrDenyNeedsReason, ErrRefused (its risk is refused now), ErrNotFound, ErrUnsigned (in
// checked mode, gates.signers listed: the gate has no signer, WithSigner, or its key is
// not listed for the actor, or for @replicas on the web and Slack). Deciding a
// pending request past its expiry marks it expired (audited) and refuses with ErrExpired.
//
// A deny by any approver ends the request; it is approved by its quorum of distinct
// approvers. Every decision, including one approval of several needed, changes the
// request only by compare-and-set on its state and content hash, so that of two
// decisions racing for the last place one wins and the other is refused.
//
// It returns the request as it stands after the decision; on a refusal, as it stood
// when refused (the zero Request if it could not be read).
func (g *Gate) Decide(ctx context.Context, id, actor, channel string, approve bool, reason string) (Request, error) {
	return g.decide(ctx, id, actor, channel, approve, reason, false)
}

// DecideAuthorized is Decide for a channel that established itself that actor may
// decide (a Slack user listed in slack.approvers or a member of its approver group):
// gates.approvers is not consulted. Every other rule holds as in Decide: the requester
// never decides (a channel maps its users to the same identities, so that the rule
// holds across channels), an approver decides once, expired, voided and decided
// requests are refused, and the decision is one compare-and-set with its audit entry.
func (g *Gate) DecideAuthorized(ctx context.Context, id, actor, channel string, approve bool, reason string) (Request, error) {
	return g.decide(ctx, id, actor, channel, approve, reason, true)
}

func (g *Gate) decide(ctx context.Context, id, actor, channel string, approve bool, reason string, authorized bool) (Request, error) {
	verb, vote := "approve", VoteApprove
	if !approve {
		verb, vote = "deny", VoteDeny
	}
	reason = strings.TrimSpace(reason)
	var out Request
	fail := func(err error) (Request, error) {
		return out, &DecisionError{Verb: verb, ID: id, Err: err}
	}
	ch := Channel(channel)
	switch {
	case !slices.Contains(channels, ch):
		return fail(fmt.Errorf("unknown channel %q (want cli, slack or web)", channel))
	case strings.TrimSpace(actor) == "":
		return fail(fmt.Errorf("no actor: a decision names who made it"))
	case !approve && reason == "":
		return fail(ErrDenyNeedsReason)
	case utf8.RuneCountInString(reason) > MaxReason:
		return fail(ErrReasonTooLong)
	}
	// refusal is a refusal whose transaction must still commit: deciding after the expiry
	// records the expiry.
	var refusal error
	err := g.st.InTx(ctx, func(tx *store.Tx) error {
		r, err := get(ctx, tx, id)
		if err != nil {
			return err
		}
		// In checked mode the decisions that do not verify count as none, here too: a
		// forged row neither takes an approver's place nor counts toward the quorum.
		if r, _, err = g.Check(ctx, tx, r); err != nil {
			return err
		}
		out = r
		if err := g.mayDecide(r, actor, authorized); err != nil {
			return err
		}
		if !g.now().Before(r.ExpiresAt) {
			if err := g.expire(ctx, tx, r); err != nil {
				return err
			}
			if out, err = get(ctx, tx, id); err != nil {
				return err
			}
			refusal = stateRefusal(out)
			return nil
		}
		approvals := len(r.Approvals())
		next := StatePending
		switch {
		case !approve:
			next = StateDenied
		case approvals+1 >= r.Quorum:
			next = StateApproved
		}
		// The compare-and-set runs for every decision, the ones that leave the request
		// pending too: it is what makes a decision on a request that has moved on fail.
		if err := g.cas(ctx, tx, r, StatePending, next, reason); err != nil {
			return err
		}
		d := Decision{Actor: actor, Channel: ch, Vote: vote, Reason: reason}
		if err := g.signDecision(r, &d); err != nil {
			return err
		}
		now := g.now()
		res, err := tx.ExecContext(ctx, `INSERT INTO approval_decisions (request_id, actor, channel, decision, reason, at, signature, signer)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_id, actor) DO NOTHING`,
			id, actor, string(ch), string(vote), reason, store.FormatTime(now), d.Signature, d.Signer)
		if err != nil {
			return fmt.Errorf("record the decision: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err != nil {
				return fmt.Errorf("record the decision: %w", err)
			}
			// Returning the error rolls the compare-and-set back with it.
			return fmt.Errorf("%w: %s decided this request meanwhile", ErrAlreadyDecided, actor)
		}
		kind := audit.KindApprovalApproved
		if !approve {
			kind = audit.KindApprovalDenied
		}
		r.State = next
		data := map[string]any{"channel": string(ch), "decision": string(vote),
			"reason": reason, "approvals": approvals + btoi(approve), "quorum": r.Quorum}
		if d.Signer != "" {
			data["signer"] = d.Signer
		}
		if err := g.audit(ctx, tx, actor, kind, r, data); err != nil {
			return err
		}
		out, err = get(ctx, tx, id)
		return err
	})
	if err != nil {
		return fail(err)
	}
	if refusal != nil {
		return fail(refusal)
	}
	return out, nil
}

// mayDecide refuses a decision the request's state or the actor's role rules out. Who
// decides is judged before the state, so that the requester is told they never decide
// rather than that they came too late.
func (g *Gate) mayDecide(r Request, actor string, authorized bool) error {
	if actor == r.Requester {
		return fmt.Errorf("%w: %s requested it; another approver must decide", ErrSelfApproval, actor)
	}
	if !authorized && !g.cfg.IsApprover(actor) {
		if len(g.cfg.Approvers) == 0 {
			return fmt.Errorf("%w: no approvers are configured (list them under gates.approvers)", ErrNotApprover)
		}
		return fmt.Errorf("%w: %s is not in gates.approvers (%s)", ErrNotApprover, actor, strings.Join(g.cfg.Approvers, ", "))
	}
	if d, ok := r.DecisionBy(actor); ok {
		verb := "approved"
		if d.Vote == VoteDeny {
			verb = "denied"
		}
		return fmt.Errorf("%w (%s %s it at %s)", ErrAlreadyDecided, actor, verb, ReadableTime(d.At))
	}
	if r.State != StatePending {
		return stateRefusal(r)
	}
	if v := g.cfg.Verdict(r.Risk); v.Refused {
		return fmt.Errorf("%w: %s", ErrRefused, v.Reason)
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
