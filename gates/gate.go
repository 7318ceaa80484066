// Package gates is warden's approval state machine: it decides which actions run
// unattended, which wait for approvers and which never run (Config.Verdict), and keeps
// each approval request's state.
//
// A request belongs to one action and is bound to its content hash: a changed target or
// changed parameters give a new hash, and the request for the old one is voided. Its state
// goes pending → approved | denied | expired | voided and changes only by compare-and-set,
// in the same transaction as the audit entry that records it, so that two approvers at
// once, a double approval, or a decision on an expired or voided request each yield one
// outcome and a clear refusal, never two decisions. The requester never decides; quorum
// distinct approvers approve; a deny by any approver ends it; unanswered, it expires.
//
// Decide is the one entry point of every channel: the CLI now, Slack and a web page
// later, each naming itself (ChannelCLI, ChannelSlack, ChannelWeb) and its actor.
package gates

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/warden-sec/warden/audit"
	"github.com/warden-sec/warden/remediators"
	"github.com/warden-sec/warden/store"
)

// SystemActor is the actor of the state changes warden makes itself, not on someone's
// decision: expiring requests and voiding those of changed actions.
const SystemActor = "warden"

// Refusals. Decide and Request wrap them with what was refused and why; test with
// errors.Is.
var (
	// ErrNotFound: no request has this id.
	ErrNotFound = errors.New("no such approval request")
	// ErrSelfApproval: the requester of an action never decides its request.
	ErrSelfApproval = errors.New("the requester of an action cannot decide its approval")
	// ErrNotApprover: the actor is not in gates.approvers.
	ErrNotApprover = errors.New("not an approver")
	// ErrAlreadyDecided: this actor decided already, or the request is no longer
	// pending (approved or denied).
	ErrAlreadyDecided = errors.New("already decided")
	// ErrExpired: the request went unanswered past its expiry.
	ErrExpired = errors.New("the request expired")
	// ErrVoided: the action changed (or was withdrawn) after the request was made.
	ErrVoided = errors.New("the request was voided")
	// ErrDenyNeedsReason: a deny must say why.
	ErrDenyNeedsReason = errors.New("a deny needs a reason")
	// ErrReasonTooLong: a decision's reason is over MaxReason characters.
	ErrReasonTooLong = fmt.Errorf("the reason is longer than %d characters", MaxReason)
	// ErrRefused: the gates refuse actions of this risk (gates.refuse).
	ErrRefused = errors.New("refused by the gates")
	// ErrNotRequired: actions of this risk run without approval.
	ErrNotRequired = errors.New("no approval needed")
)

// MaxReason bounds a decision's reason, in characters: the one limit of every channel
// (the CLI, Slack's deny dialog, the dashboard's field), so that a reason one channel
// takes is never one another refuses.
const MaxReason = 500

// Gate keeps approval requests in the store and records every change in the audit log.
// It is safe for concurrent use, and several processes may share one store.
type Gate struct {
	st  *store.Store
	log *audit.Log
	cfg Config
	now func() time.Time
	// signer signs the decisions this gate makes (WithSigner); nil: unsigned.
	signer ssh.Signer
}

// New returns the gate of cfg (validated: Config.Validate) over st, recording to log.
// now is the clock (nil: time.Now).
func New(st *store.Store, log *audit.Log, cfg Config, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	return &Gate{st: st, log: log, cfg: cfg, now: now}
}

// Config is the gate's configuration.
func (g *Gate) Config() Config { return g.cfg }

// RequestID is the id of the request of an action for a content hash.
func RequestID(actionID, contentHash string) string {
	sum := sha256.Sum256([]byte(actionID + "\x00" + contentHash))
	return "apr-" + hex.EncodeToString(sum[:6])
}

// Request asks for approval of action a as bound to contentHash, in the caller's
// transaction. For the same action and hash it returns the existing request, whatever its
// state: a denied or expired request stays so until the action changes. A request of the
// same action for another hash, still pending or approved, is voided first (audited): its
// approvals were given to something else. An action whose risk needs no approval is
// refused (ErrNotRequired, ErrRefused).
func (g *Gate) Request(ctx context.Context, tx *store.Tx, a remediators.Action, contentHash, requester string) (Request, error) {
	fail := func(err error) (Request, error) {
		return Request{}, fmt.Errorf("request approval of action %s: %w", a.ID, err)
	}
	switch {
	case a.ID == "":
		return fail(errors.New("the action has no id"))
	case contentHash == "":
		return fail(errors.New("no content hash to bind the approval to"))
	case strings.TrimSpace(requester) == "":
		return fail(errors.New("no requester"))
	}
	v := g.cfg.Verdict(a.Risk)
	switch v.Kind {
	case Refused:
		return fail(fmt.Errorf("%w: %s", ErrRefused, v.Reason))
	case Auto:
		return fail(fmt.Errorf("%w: %s-risk actions are applied automatically", ErrNotRequired, a.Risk))
	}
	id := RequestID(a.ID, contentHash)
	if err := g.void(ctx, tx, a.ID, contentHash, fmt.Sprintf("the action changed: superseded by request %s", id)); err != nil {
		return fail(err)
	}
	if r, ok, err := byContent(ctx, tx, a.ID, contentHash); err != nil || ok {
		if err != nil {
			return fail(err)
		}
		return r, nil
	}
	now := g.now().UTC()
	r := Request{
		ID: id, ActionID: a.ID, ContentHash: contentHash, Remediator: a.Remediator, Target: a.Target, Part: a.Part,
		Risk: a.Risk, Requester: requester, Quorum: v.Quorum, State: StatePending,
		CreatedAt: now, ExpiresAt: now.Add(g.cfg.ExpiryOrDefault()), Decisions: []Decision{},
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO approval_requests (`+requestColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.ActionID, r.ContentHash, r.Remediator, r.Target, r.Part, r.Risk.String(), r.Requester, r.Quorum,
		string(r.State), store.FormatTime(r.CreatedAt), store.FormatTime(r.ExpiresAt), "", ""); err != nil {
		return fail(err)
	}
	if err := g.audit(ctx, tx, requester, audit.KindApprovalRequested, r, map[string]any{
		"content_hash": r.ContentHash, "remediator": r.Remediator, "target": r.Target, "part": r.Part,
		"risk": r.Risk.String(), "quorum": r.Quorum, "expires_at": store.FormatTime(r.ExpiresAt),
	}); err != nil {
		return fail(err)
	}
	return r, nil
}

// Void voids the pending or approved requests of an action, in the caller's transaction:
// the action changed, or was withdrawn, and approvals given to it no longer hold. Each
// voided request gets one audit entry, by SystemActor, with reason.
func (g *Gate) Void(ctx context.Context, tx *store.Tx, actionID, reason string) error {
	if err := g.void(ctx, tx, actionID, "", reason); err != nil {
		return fmt.Errorf("void approvals of action %s: %w", actionID, err)
	}
	return nil
}

// void voids the live requests of actionID except the one for keep.
func (g *Gate) void(ctx context.Context, tx *store.Tx, actionID, keep, reason string) error {
	live, err := list(ctx, tx, Filter{ActionID: actionID, States: []State{StatePending, StateApproved}})
	if err != nil {
		return err
	}
	for _, r := range live {
		if keep != "" && r.ContentHash == keep {
			continue
		}
		if err := g.finish(ctx, tx, r, r.State, StateVoided, reason, audit.KindApprovalVoided); err != nil {
			return err
		}
	}
	return nil
}

// AnyDue reports whether a pending request may be past its expiry (ExpireDue's
// candidates, read outside any transaction): a caller that finds none need not take the
// whole store's lock to expire them.
func (g *Gate) AnyDue(ctx context.Context) (bool, error) {
	where, args := Filter{States: []State{StatePending}, DueBy: g.now()}.sql()
	var one int
	err := g.st.Read(ctx, func(r *store.Reader) error {
		return r.QueryRowContext(ctx, `SELECT 1 FROM approval_requests`+where+` LIMIT 1`, args...).Scan(&one)
	})
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("look for overdue approval requests: %w", err)
	}
	return true, nil
}

// ExpireDue marks expired every pending request past its expiry, in the caller's
// transaction, one audit entry each (by SystemActor), and returns how many it expired.
func (g *Gate) ExpireDue(ctx context.Context, tx *store.Tx) (int, error) {
	now, n := g.now(), 0
	pending, err := list(ctx, tx, Filter{States: []State{StatePending}, DueBy: now})
	if err != nil {
		return 0, fmt.Errorf("expire approval requests: %w", err)
	}
	for _, r := range pending {
		if now.Before(r.ExpiresAt) {
			continue
		}
		if err := g.expire(ctx, tx, r); err != nil {
			return n, fmt.Errorf("expire approval requests: %w", err)
		}
		n++
	}
	return n, nil
}

func (g *Gate) expire(ctx context.Context, tx *store.Tx, r Request) error {
	reason := "nobody decided it in time (" + approvalsText(len(r.Approvals()), r.Quorum) + ")"
	return g.finish(ctx, tx, r, StatePending, StateExpired, reason, audit.KindApprovalExpired)
}

// finish moves r from state from to a final state by compare-and-set, with its audit
// entry by SystemActor.
func (g *Gate) finish(ctx context.Context, tx *store.Tx, r Request, from, to State, reason, kind string) error {
	if err := g.cas(ctx, tx, r, from, to, reason); err != nil {
		return err
	}
	r.State = to
	return g.audit(ctx, tx, SystemActor, kind, r, map[string]any{"from": string(from), "reason": reason,
		"approvals": len(r.Approvals()), "quorum": r.Quorum})
}

// cas is the one way a request changes state: it succeeds only if the request is still
// in state from and bound to the same content hash, as it was read.
func (g *Gate) cas(ctx context.Context, tx *store.Tx, r Request, from, to State, reason string) error {
	decided := ""
	if to.Final() {
		decided = store.FormatTime(g.now())
	} else {
		reason = r.Reason
	}
	res, err := tx.ExecContext(ctx, `UPDATE approval_requests SET state = ?, decided_at = ?, reason = ?
		WHERE id = ? AND state = ? AND content_hash = ?`, string(to), decided, reason, r.ID, string(from), r.ContentHash)
	if err != nil {
		return fmt.Errorf("request %s: %s → %s: %w", r.ID, from, to, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("request %s: %s → %s: %w", r.ID, from, to, err)
	}
	if n == 1 {
		return nil
	}
	return why(ctx, tx, r.ID, from)
}

// why explains a compare-and-set that changed nothing: the request moved on since it was
// read (another decision, an expiry, a void) or is gone.
func why(ctx context.Context, q Querier, id string, from State) error {
	cur, err := get(ctx, q, id)
	if err != nil {
		return fmt.Errorf("request %s changed meanwhile: %w", id, err)
	}
	if cur.State == from {
		return fmt.Errorf("request %s changed meanwhile: its content hash is now %s", id, cur.ContentHash)
	}
	return stateRefusal(cur)
}

// stateRefusal is the refusal to decide a request that has left pending.
func stateRefusal(r Request) error {
	switch r.State {
	case StateExpired:
		return fmt.Errorf("%w at %s: nobody decided it in time (%s); run warden apply again to ask anew",
			ErrExpired, ReadableTime(r.ExpiresAt), approvalsText(len(r.Approvals()), r.Quorum))
	case StateVoided:
		return fmt.Errorf("%w%s: %s", ErrVoided, atText(r.DecidedAt), r.Reason)
	case StateApproved, StateDenied:
		return fmt.Errorf("%w (it was %s%s)", ErrAlreadyDecided, r.State, atText(r.DecidedAt))
	}
	return fmt.Errorf("request %s is %s", r.ID, r.State)
}

// ReadableTime is a time as a refusal says it to a person: "2026-12-06 10:59:43 UTC".
func ReadableTime(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// atText is " at " and the readable time, or "" for a zero time.
func atText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return " at " + ReadableTime(t)
}

// approvalsText is "1 of 2 approvals", "0 of 1 approval".
func approvalsText(n, quorum int) string {
	if quorum == 1 {
		return fmt.Sprintf("%d of 1 approval", n)
	}
	return fmt.Sprintf("%d of %d approvals", n, quorum)
}

// DecisionError is a refused or failed decision: what was being decided (Verb,
// "approve" or "deny", and the request's ID) and why it could not be (Err).
type DecisionError struct {
	Verb, ID string
	Err      error
}

func (e *DecisionError) Error() string { return e.Verb + " request " + e.ID + ": " + e.Err.Error() }

// Unwrap is the reason, for errors.Is(err, ErrExpired) and the like.
func (e *DecisionError) Unwrap() error { return e.Err }

// Reason is why a decision was refused, without the "approve request apr-…:" Decide
// wraps it in: a channel's reply names the request and the verb itself ("Refused: you
// (bob) cannot approve request apr-…: " and Reason), so that nothing is said twice.
func Reason(err error) string {
	if de, ok := errors.AsType[*DecisionError](err); ok {
		err = de.Err
	}
	return strings.TrimSuffix(err.Error(), ".")
}

func (g *Gate) audit(ctx context.Context, tx *store.Tx, actor, kind string, r Request, data map[string]any) error {
	data["request"] = r.ID
	data["action"] = r.ActionID
	data["state"] = string(r.State)
	if _, err := g.log.Append(ctx, tx, audit.Event{Actor: actor, Kind: kind, Subject: r.ID, Data: data}); err != nil {
		return fmt.Errorf("audit %s of request %s: %w", kind, r.ID, err)
	}
	return nil
}
